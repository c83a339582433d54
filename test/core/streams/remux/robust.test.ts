import t from 'tap';
import { FlvToTs, PES_CAP, TsToFlv, type FlvTag } from '../../../../core/streams/remux/index.ts';
import { fixture, prng, readFlv } from './helpers.ts';

function valid(tags: FlvTag[]): boolean {
  return tags.every((x) => (x.type === 8 || x.type === 9) && Buffer.isBuffer(x.body) && x.timestamp >= 0 && x.timestamp < 4294967296);
}

t.test('TsToFlv: garbage, bit flips and truncation never throw; carry and PES bounded', async (t) => {
  const rnd = prng(7);
  const src = fixture('av.mpegts');
  const inputs: Buffer[] = [];
  for (let i = 0; i < 20; i++) inputs.push(Buffer.from(Array.from({ length: 5000 }, () => (rnd() < 0.05 ? 0x47 : Math.floor(rnd() * 256)))));
  for (let i = 0; i < 20; i++) {
    const b = Buffer.from(src);
    for (let k = 0; k < 200; k++) b[Math.floor(rnd() * b.length)] ^= 1 << Math.floor(rnd() * 8);
    inputs.push(b);
  }
  for (let i = 0; i < 20; i++) inputs.push(src.subarray(Math.floor(rnd() * 5000), Math.floor(rnd() * src.length)));
  let worst = 0;
  let tags = 0;
  let invalid = 0;
  for (const input of inputs) {
    const c = new TsToFlv();
    for (let p = 0; p < input.length;) {
      const n = 1 + Math.floor(rnd() * 700);
      const out = c.push(input.subarray(p, p + n));
      if (!valid(out)) invalid++;
      tags += out.length;
      worst = Math.max(worst, c.pending);
      p += n;
    }
    tags += c.flush().length;
  }
  t.equal(invalid, 0, 'every tag has a media type, a 32-bit timestamp and a body');
  t.ok(worst <= 187, `carry-over at most 187 bytes (saw ${worst})`);
  t.ok(tags > 0, 'the flipped and truncated inputs still give tags');
});

t.test('TsToFlv: an endless PES is dropped at PES_CAP and the stream goes on', async (t) => {
  const c = new FlvToTs();
  const tags = readFlv(fixture('av.flv'));
  const ts = Buffer.concat(tags.map((x) => c.push(x)).filter((b): b is Buffer => b !== undefined));
  const d = new TsToFlv();
  const before = d.push(ts.subarray(0, 188 * 40));
  const packet = Buffer.alloc(188, 0xaa);
  packet.set([0x47, 0x41, 0x00, 0x10]); // PID 0x100, payload_unit_start
  packet.set([0, 0, 1, 0xe0, 0, 0, 0x80, 0x80, 5, 0x21, 0, 1, 0, 1], 4);
  let most = 0;
  let got = d.push(packet).length;
  for (let i = 0; i < Math.ceil(PES_CAP / 184) + 100; i++) {
    packet[1] = 0x01;
    packet[3] = 0x10 | ((i + 1) & 15);
    got += d.push(packet).length;
    most = Math.max(most, d.buffered);
  }
  t.ok(before.length > 0);
  t.ok(most <= 2 * PES_CAP, `PES data held at most PES_CAP per stream (saw ${most})`);
  t.equal(got, 0, 'the over-long PES gives nothing');
  const after = [...d.push(ts), ...d.flush()];
  t.ok(after.some((x) => x.type === 9 && x.body[1] === 1), 'video frames again after the next PES starts');
});

t.test('FlvToTs: random bodies never throw and give whole packets', async (t) => {
  const rnd = prng(11);
  const c = new FlvToTs();
  const src = readFlv(fixture('av.flv'));
  let count = 0;
  let bad = 0;
  for (let i = 0; i < 3000; i++) {
    const base = src[Math.floor(rnd() * src.length)];
    const body = Buffer.from(base.body.subarray(0, Math.floor(rnd() * (base.body.length + 1))));
    for (let k = 0; k < 3; k++) if (body.length > 0) body[Math.floor(rnd() * body.length)] = Math.floor(rnd() * 256);
    const out = c.push({ type: base.type, timestamp: Math.floor(rnd() * 2 ** 32), body });
    if (out) { count++; if (out.length % 188 !== 0 || out[0] !== 0x47) bad++; }
  }
  t.ok(count > 0);
  t.equal(bad, 0, 'outputs are whole packets');
});

t.test('allocation: one Buffer per tag, sized to its packets; the PES buffer reused (not timed)', async (t) => {
  const tags = readFlv(fixture('av.flv'));
  const c = new FlvToTs();
  const outs = tags.map((x) => c.push(x)).filter((b): b is Buffer => b !== undefined);
  t.ok(outs.every((b) => b.length % 188 === 0), 'each output is whole packets, nothing trailing');
  const ts = Buffer.concat(outs);
  const d = new TsToFlv();
  d.push(ts);
  const held = d.buffered;
  for (let i = 0; i < 5; i++) d.push(ts);
  t.equal(d.buffered, held, 'looping the same stream grows no PES buffer');
});
