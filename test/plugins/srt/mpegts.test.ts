import t from 'tap';
import { readFile } from 'node:fs/promises';
import type { IngestPeer } from '../../../sdk/index.ts';
import { TS_PACKET, isRandomAccess, parsePat, parsePmt, pidOf } from '../../../core/streams/mpegts.ts';
import { Streams } from '../../../core/streams/table.ts';

const peer = (sock: number): IngestPeer => ({ id: `srt-${sock}`, protocol: 'srt', stream: 'x', remote: '127.0.0.1:1', params: {}, traffic: () => ({ rxBytes: 0, txBytes: 0 }) });

// Recorded with ffmpeg: testsrc2 160x120 10 fps H.264 (-g 5) + AAC sine, 1 s, -f mpegts.
const TS = await readFile(new URL('../../fixtures/srt/h264-aac.mpegts', import.meta.url));

t.test('PAT and PMT give the tracks', async (t) => {
  t.equal(TS.length % TS_PACKET, 0);
  t.equal(pidOf(TS, 0), 0x11, 'ffmpeg starts with the SDT');
  let pmtPid = -1;
  for (let o = 0; o < TS.length; o += TS_PACKET) if (pidOf(TS, o) === 0) { pmtPid = parsePat(TS, o)[0]!; break; }
  t.equal(pmtPid, 0x1000);
  let tracks;
  for (let o = 0; o < TS.length; o += TS_PACKET) if (pidOf(TS, o) === pmtPid) { tracks = parsePmt(TS, o); break; }
  t.same(tracks, [{ pid: 0x100, streamType: 0x1b }, { pid: 0x101, streamType: 0x0f }], 'H.264 and AAC');
});

t.test('random access points: one per GOP on the video PID', async (t) => {
  let n = 0;
  for (let o = 0; o < TS.length; o += TS_PACKET) if (pidOf(TS, o) === 0x100 && isRandomAccess(TS, o)) n++;
  t.equal(n, 2, '10 frames with -g 5');
});

t.test('a subscriber joining mid-GOP starts with PAT, PMT and a keyframe; bytes are fanned out', async (t) => {
  // the start rule is the stream table's (core/streams/ts-view.ts); the host sends what it decides
  const table = new Streams();
  const pub = table.publish('x', 'mpegts', peer(99), { internal: true });
  if (!pub.ok) throw new Error(pub.reason);
  const got = new Map<number, Buffer[]>([[1, []], [2, []]]);
  const chunk = 7 * TS_PACKET;
  let off = 0;
  for (; off < chunk * 4; off += chunk) pub.handle.push(TS.subarray(off, off + chunk));
  for (const [sock, list] of got) {
    table.read('x', 'mpegts', peer(sock), { send: (batch) => { for (const b of batch) list.push(Buffer.from(b)); return true; }, stop: () => {} }, { internal: true });
  }
  for (; off < TS.length; off += chunk) pub.handle.push(TS.subarray(off, Math.min(off + chunk, TS.length)));
  const a = Buffer.concat(got.get(1)!);
  t.ok(a.equals(Buffer.concat(got.get(2)!)), 'both get the same bytes');
  t.equal(pidOf(a, 0), 0, 'PAT first');
  t.equal(pidOf(a, TS_PACKET), 0x1000, 'then the PMT');
  t.equal(pidOf(a, 2 * TS_PACKET), 0x100, 'then video');
  t.ok(isRandomAccess(a, 2 * TS_PACKET), 'at a random access point');
});
