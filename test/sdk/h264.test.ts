import t from 'tap';
import { avcSize } from '../../sdk/h264.ts';

/*
 * avcSize on hand-built Baseline SPSs (Exp-Golomb written here): the size with cropping, and the
 * hostile ones (cropped to nothing, absurd sizes, truncated, long codes) give undefined, never a
 * negative size or a throw.
 */

function sps(mbWidth: number, mapHeight: number, crop?: [number, number, number, number], cut = 0): Buffer {
  const bits: number[] = [];
  const u = (n: number, v: number) => { for (let i = n - 1; i >= 0; i--) bits.push(Math.floor(v / 2 ** i) % 2); };
  const ue = (v: number) => { const x = v + 1; const len = Math.floor(Math.log2(x)); u(len, 0); u(len + 1, x); };
  u(8, 66); u(16, 0x001e); ue(0); ue(0); ue(2); ue(1); u(1, 0);
  ue(mbWidth - 1); ue(mapHeight - 1); u(1, 1); u(1, 1);
  if (crop) { u(1, 1); for (const c of crop) ue(c); } else u(1, 0);
  u(1, 0); u(1, 1);
  while (bits.length % 8) bits.push(0);
  const bytes = [0x67];
  for (let i = 0; i < bits.length; i += 8) bytes.push(parseInt(bits.slice(i, i + 8).join(''), 2));
  return Buffer.from(bytes.slice(0, bytes.length - cut));
}

t.test('avcSize: the picture, cropping applied; broken headers give undefined', async (t) => {
  t.same(avcSize(sps(20, 15)), { width: 320, height: 240 });
  t.same(avcSize(sps(20, 12, [0, 0, 0, 6])), { width: 320, height: 180 }, '192 rows cropped by 12');
  t.equal(avcSize(sps(20, 12, [0, 0, 0, 96])), undefined, 'cropped to nothing');
  t.equal(avcSize(sps(20, 12, [200, 0, 0, 0])), undefined, 'cropped past the width');
  t.equal(avcSize(sps(5000, 12)), undefined, 'a side no level allows');
  t.equal(avcSize(sps(20, 15, undefined, 3)), undefined, 'truncated');
  t.equal(avcSize(Buffer.from([0x67, 66, 0, 30, 0, 0, 0, 0, 0])), undefined, 'an Exp-Golomb code longer than 32 bits');
  t.equal(avcSize(Buffer.from([0x68, 1, 2, 3])), undefined, 'not an SPS');
});
