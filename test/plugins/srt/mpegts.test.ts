import t from 'tap';
import { readFile } from 'node:fs/promises';
import { TS_PACKET, isRandomAccess, parsePat, parsePmt, pidOf } from '../../../plugins/srt/mpegts.ts';
import { Channel, MAX_STALLS } from '../../../plugins/srt/channel.ts';

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
  t.same(tracks, [{ pid: 0x100, streamType: 0x1b, codec: 'h264' }, { pid: 0x101, streamType: 0x0f, codec: 'aac' }]);
});

t.test('random access points: one per GOP on the video PID', async (t) => {
  let n = 0;
  for (let o = 0; o < TS.length; o += TS_PACKET) if (pidOf(TS, o) === 0x100 && isRandomAccess(TS, o)) n++;
  t.equal(n, 2, '10 frames with -g 5');
});

t.test('a subscriber joining mid-GOP starts with PAT, PMT and a keyframe; bytes are fanned out', async (t) => {
  const got = new Map<number, Buffer[]>([[1, []], [2, []]]);
  const ch = new Channel('x', 99, (sock, data) => { got.get(sock)!.push(Buffer.from(data)); return data.length; });
  const chunk = 7 * TS_PACKET;
  const sub = (sock: number) => ({ sock, sent: 0, dropped: 0, started: false });
  let off = 0;
  for (; off < chunk * 4; off += chunk) ch.feed(TS.subarray(off, off + chunk));
  ch.subscribers.set(1, sub(1));
  ch.subscribers.set(2, sub(2));
  for (; off < TS.length; off += chunk) ch.feed(TS.subarray(off, Math.min(off + chunk, TS.length)));
  const a = Buffer.concat(got.get(1)!);
  t.ok(a.equals(Buffer.concat(got.get(2)!)), 'both get the same bytes');
  t.equal(pidOf(a, 0), 0, 'PAT first');
  t.equal(pidOf(a, TS_PACKET), 0x1000, 'then the PMT');
  t.equal(pidOf(a, 2 * TS_PACKET), 0x100, 'then video');
  t.ok(isRandomAccess(a, 2 * TS_PACKET), 'at a random access point');
  t.equal(ch.subscribers.get(1)!.sent, a.length);
  t.same(ch.tracks.map((x) => x.codec), ['h264', 'aac']);
});

t.test('a subscriber whose send buffer is full gets its bytes counted as dropped', async (t) => {
  const ch = new Channel('x', 99, (_s, data) => Math.floor(data.length / 2));
  ch.subscribers.set(1, { sock: 1, sent: 0, dropped: 0, started: true });
  ch.feed(TS.subarray(0, 7 * TS_PACKET));
  t.equal(ch.subscribers.get(1)!.sent + ch.subscribers.get(1)!.dropped, 7 * TS_PACKET);
  t.ok(ch.subscribers.get(1)!.dropped > 0);
});

t.test('a subscriber that takes nothing for MAX_STALLS chunks is reported once', async (t) => {
  const stalled: number[] = [];
  const ch = new Channel('x', 99, (sock, data) => (sock === 1 ? 0 : data.length), (sock) => stalled.push(sock));
  ch.subscribers.set(1, { sock: 1, sent: 0, dropped: 0, started: true });
  ch.subscribers.set(2, { sock: 2, sent: 0, dropped: 0, started: true });
  for (let i = 0; i < MAX_STALLS + 10; i++) ch.feed(TS.subarray(0, 7 * TS_PACKET));
  t.same(stalled, [1], 'only the stalled one, once');
});
