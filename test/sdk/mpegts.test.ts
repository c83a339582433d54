import t from 'tap';
import { readFile } from 'node:fs/promises';
import {
  TS_PACKET, TS_WRAP, tsPat, tsPayloadAt, tsPesStamps, tsPid, tsPmt, tsPrimary, tsRandomAccess, tsReadStamp, tsSplit, tsStreamKind,
  tsUnitStart, tsUnwrap, tsWriteStamp,
} from '../../sdk/toolkit.ts';

// Recorded with ffmpeg: testsrc2 160x120 10 fps H.264 (-g 5) + AAC sine, 1 s, -f mpegts.
const TS = await readFile(new URL('../fixtures/srt/h264-aac.mpegts', import.meta.url));
const offsets = (pid: number) => [...Array(TS.length / TS_PACKET).keys()].map((i) => i * TS_PACKET).filter((o) => tsPid(TS, o) === pid);

t.test('one set of MPEG-TS helpers: tables, keyframes and stamps of a packet at an offset', async (t) => {
  const pat = offsets(0)[0]!;
  t.same(tsPat(TS, pat), [0x1000], 'the PAT names the PMT');
  t.same(tsPat(TS, offsets(0x1000)[0]!), [], 'a PMT is no PAT');
  const pmt = tsPmt(TS, offsets(0x1000)[0]!);
  t.same(pmt, { pcrPid: 0x100, streams: [{ pid: 0x100, streamType: 0x1b, kind: 'video' }, { pid: 0x101, streamType: 0x0f, kind: 'audio' }] });
  t.equal(tsPmt(TS, pat), null, 'a PAT is no PMT');
  t.equal(tsPrimary(pmt!.streams)?.pid, 0x100, 'video first');
  t.equal(tsPrimary([{ pid: 7, streamType: 0x0f, kind: 'audio' }])?.pid, 7, 'else the first stream');
  t.equal(tsStreamKind(0x06), 'other');
  const video = offsets(0x100);
  t.equal(video.filter((o) => tsRandomAccess(TS, o)).length, 2, 'one keyframe per GOP of 5');
  const starts = video.filter((o) => tsUnitStart(TS, o)).map((o) => tsPesStamps(TS, o));
  t.equal(starts.length, 10, 'one PES a frame');
  t.ok(starts.every((s) => s && s.pts >= s.dts), 'a PTS never before its DTS');
  t.equal(starts[1]!.dts - starts[0]!.dts, 9000, '10 fps: 9000 ticks apart');
  t.equal(tsPesStamps(TS, video.find((o) => !tsUnitStart(TS, o))!), null, 'no PES start, no stamps');
  t.ok(tsPayloadAt(TS, video[0]!) > video[0]! + 4, 'the first video packet has an adaptation field');
});

t.test('stamps wrap at 2^33, split skips garbage', async (t) => {
  const b = Buffer.alloc(5);
  tsWriteStamp(b, 0, TS_WRAP + 5, 2);
  t.equal(tsReadStamp(b, 0), 5);
  t.equal(b[0]! >> 4, 2, 'the prefix');
  tsWriteStamp(b, 0, -1);
  t.equal(tsReadStamp(b, 0), TS_WRAP - 1, 'the prefix kept, a negative value wrapped');
  t.equal(b[0]! >> 4, 2);
  t.equal(tsUnwrap(10, TS_WRAP - 10), TS_WRAP + 10, 'past the wrap');
  t.equal(tsUnwrap(TS_WRAP - 10, 10), -10, 'before it');
  const out: Buffer[] = [];
  const rest = tsSplit(Buffer.concat([Buffer.from([1, 2, 3]), TS.subarray(0, 2 * TS_PACKET + 7)]), out);
  t.equal(out.length, 2);
  t.equal(rest.length, 7);
  t.equal(tsPid(out[0]!), tsPid(TS, 0), 'the packets are the stream\'s');
});
