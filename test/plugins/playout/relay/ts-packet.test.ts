import t from 'tap';
import {
  isRandomAccess, pidOf, readPcr, readPesStamps, setContinuity, shiftPesStamps, splitPackets, TS_WRAP, writePcr,
} from '../../../../plugins/playout/relay/ts-packet.ts';

/** A packet starting a video PES with PTS and DTS, an adaptation field with PCR and the RAI flag. */
function pesPacket(pts: number, dts: number, pcr27: number): Buffer {
  const p = Buffer.alloc(188, 0xff);
  p.set([0x47, 0x41, 0x00, 0x30]); // PUSI, PID 0x100, adaptation + payload, CC 0
  p[4] = 7; // adaptation length: flags + PCR
  p[5] = 0x50; // RAI + PCR flag
  writePcr(p, pcr27);
  const o = 12;
  p.set([0, 0, 1, 0xe0, 0, 0, 0x80, 0xc0, 10], o);
  const stamp = (at: number, prefix: number, v: number) => {
    p[at] = (prefix << 4) | ((Math.floor(v / 2 ** 30) & 7) << 1) | 1;
    p[at + 1] = (v >> 22) & 0xff; p[at + 2] = (((v >> 15) & 0x7f) << 1) | 1;
    p[at + 3] = (v >> 7) & 0xff; p[at + 4] = ((v & 0x7f) << 1) | 1;
  };
  stamp(o + 9, 3, pts);
  stamp(o + 14, 1, dts);
  return p;
}

t.test('header fields, PES stamps and PCR read back as written', async (t) => {
  const p = pesPacket(2 ** 32 + 12345, 2 ** 32 + 9000, 27_000_000 * 3 + 17);
  t.equal(pidOf(p), 0x100);
  t.ok(isRandomAccess(p));
  t.same(readPesStamps(p), { pts: 2 ** 32 + 12345, dts: 2 ** 32 + 9000 });
  t.equal(readPcr(p), 27_000_000 * 3 + 17);
  setContinuity(p, 0x1b);
  t.equal(p[3]! & 0x0f, 0x0b, 'the counter is 4 bits');
  t.equal(p[3]! & 0xf0, 0x30, 'the other bits are kept');
});

t.test('shifting stamps wraps modulo 2^33 both ways', async (t) => {
  const p = pesPacket(TS_WRAP - 100, TS_WRAP - 200, 0);
  shiftPesStamps(p, 300);
  t.same(readPesStamps(p), { pts: 200, dts: 100 });
  shiftPesStamps(p, -400);
  t.same(readPesStamps(p), { pts: TS_WRAP - 200, dts: TS_WRAP - 300 });
  const q = Buffer.from(p);
  q[1] = 0x01; // no unit start: not a PES header, left alone
  shiftPesStamps(q, 1000);
  t.equal(readPesStamps(q), null);
  t.ok(q.equals(Object.assign(Buffer.from(p), { 1: 0x01 })));
});

t.test('splitting a byte stream keeps the partial packet and resyncs after garbage', async (t) => {
  const a = pesPacket(1, 1, 0);
  const out: Buffer[] = [];
  const rest = splitPackets(Buffer.concat([Buffer.from([1, 2, 3]), a, a, a.subarray(0, 50)]), out);
  t.equal(out.length, 2);
  t.equal(rest.length, 50);
  t.ok(out.every((p) => p.equals(a)));
});
