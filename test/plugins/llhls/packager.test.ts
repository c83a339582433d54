import t from 'tap';
import type { Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FlvPacket } from '../../../sdk/index.ts';
import { checkPlaylist, checkUpdate } from '../../../plugins/llhls/check.ts';
import { Packager, type PackagerOptions } from '../../../plugins/llhls/packager.ts';
import { renderMedia, renderPlain } from '../../../plugins/llhls/playlist-render.ts';
import { decode, flvPackets, makeFlv, noFfmpeg, probeStreams, trackSpans, writeMp4 } from './fmp4-helpers.ts';

/*
 * The packager (plugins/llhls/packager.ts) on FLV files made by ffmpeg (25 fps, a keyframe every
 * second, 3 s): parts at most the part target, segments cut at keyframes, every playlist it passes
 * through valid for the RFC 8216bis checker, the files it holds bounded by the window and its
 * byte bound, a changed track a new init after a discontinuity, and what it made plays.
 */
const dir = mkdtempSync(join(tmpdir(), 'packager-test-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.UTC(2026, 0, 1);

function packager(opts: Partial<PackagerOptions> = {}): Packager {
  return new Packager({ targetDuration: 1, partTarget: 0.2, windowSegments: 10, maxBytes: 64 << 20, epoch: 'e1', now: () => T0, ...opts });
}

/** Pushes the packets one per batch, checking every playlist state on the way (and each against the one before). */
function feed(t: Test, p: Packager, packets: readonly FlvPacket[], shift = 0): string[] {
  const seen: string[] = [];
  let before = renderMedia(p.rendition);
  for (const pk of packets) {
    const v = p.version;
    p.push([{ ...pk, timestamp: pk.timestamp + shift }]);
    if (p.version === v) continue;
    const now = renderMedia(p.rendition);
    const bad = [...checkPlaylist(now), ...checkUpdate(before, now), ...checkPlaylist(renderMedia(p.rendition, { skip: 'YES' }))];
    if (bad.length > 0) {
      t.fail(`a playlist state breaks the RFC: ${JSON.stringify(bad)}\n${now}`);
      break;
    }
    before = now;
    seen.push(now);
  }
  return seen;
}

for (const kind of ['av', 'video', 'audio'] as const) {
  t.test(`${kind}: parts at most the target, segments at keyframes, every state valid, the result plays`, { skip: noFfmpeg }, async (t) => {
    const packets = flvPackets(makeFlv(dir, kind));
    const p = packager();
    feed(t, p, packets);
    p.end();
    const r = p.rendition;
    t.ok(r.ended, 'ended');
    t.same(checkPlaylist(renderMedia(r)), [], 'the ended playlist is valid');
    t.same(checkPlaylist(renderPlain(r)), [], 'and the plain one');
    t.ok(r.segments.length >= 2, `segments (${r.segments.length})`);
    for (const s of r.segments) {
      for (const part of s.parts) t.ok(part.duration <= 0.2 + 1e-9, `part ${part.uri} at most 0.2 s (${part.duration})`);
      t.ok(s.parts[0]!.independent, `segment ${s.msn} starts independent`);
      if (s !== r.segments.at(-1)) t.ok(Math.abs(s.duration - 1) < 0.05, `segment ${s.msn} about a GOP (${s.duration})`);
    }
    const init = p.file(r.initUri)!.data;
    const mp4 = writeMp4(join(dir, `${kind}-segments.mp4`), init, r.segments.map((s) => p.file(s.uri)!));
    const parts = writeMp4(join(dir, `${kind}-parts.mp4`), init, r.segments.slice(-2).flatMap((s) => s.parts.map((x) => p.file(x.uri)!)));
    t.equal(decode(mp4).errors, '', 'the segments decode');
    t.equal(decode(parts).errors, '', 'the parts of the newest segments decode');
    const want = kind === 'av' ? ['video', 'audio'] : [kind];
    t.same(probeStreams(mp4).map((s) => s.codec_type), want, 'with the source\'s streams');
  });
}

t.test('each part\'s audio reaches as far as its video (a player\'s buffer holds the whole segment)', { skip: noFfmpeg }, async (t) => {
  const p = packager();
  feed(t, p, flvPackets(makeFlv(dir, 'av')));
  const r = p.rendition;
  const parts = [...r.segments.flatMap((s) => s.parts), ...r.open.parts];
  t.ok(parts.length > 10, `parts (${parts.length})`);
  let worst = Infinity;
  for (const part of parts) {
    const spans = trackSpans(p.file(part.uri)!.data, { 1: 90_000, 2: 44_100 });
    const video = spans.get(1)!;
    const audio = spans.get(2)!;
    worst = Math.min(worst, audio.end - video.end);
  }
  t.ok(worst >= -0.001, `audio ends at or after the video in every part (worst ${(worst * 1000).toFixed(1)} ms)`);
});

t.test('the window and the byte bound hold what the playlist names, no more', { skip: noFfmpeg }, async (t) => {
  const packets = flvPackets(makeFlv(dir, 'av'));
  const span = packets.at(-1)!.timestamp + 40;
  const p = packager({ windowSegments: 3 });
  for (let round = 0; round < 4; round++) feed(t, p, packets.filter((x) => round === 0 || !x.kind.endsWith('header')), round * span);
  const r = p.rendition;
  t.equal(r.segments.length, 3, 'the window');
  t.ok(r.mediaSequence >= 8, `old segments left (${r.mediaSequence})`);
  t.equal(p.file(`e1-${r.mediaSequence - 1}.m4s`), undefined, 'a segment that left is gone');
  t.equal(p.file(`e1-0.0.m4s`), undefined, 'and its parts');
  t.ok(p.file(r.segments[0]!.uri), 'the oldest in the window is held');
  let named = p.file(r.initUri)!.data.length;
  for (const s of r.segments) named += p.file(s.uri)!.data.length + s.parts.reduce((n, x) => n + (p.file(x.uri)?.data.length ?? 0), 0);
  for (const x of r.open.parts) named += p.file(x.uri)!.data.length;
  t.equal(p.bytes, named, 'bytes held are those of the files named');

  const small = packager({ maxBytes: 1 });
  feed(t, small, packets);
  t.equal(small.rendition.segments.length, 1, 'a byte bound below one segment keeps one');
});

t.test('a changed track is a new init after a discontinuity', { skip: noFfmpeg }, async (t) => {
  const packets = flvPackets(makeFlv(dir, 'av'));
  const p = packager();
  feed(t, p, packets);
  const firstInit = p.rendition.initUri;
  const videoHeader = packets.find((x) => x.kind === 'video-header')!;
  // the same SPS with another profile byte: another track
  const body = Buffer.from(videoHeader.body);
  body[6] = body[6] === 0x64 ? 0x4d : 0x64;
  const span = packets.at(-1)!.timestamp + 40;
  const after = feed(t, p, [{ ...videoHeader, body, timestamp: span }, ...packets.filter((x) => !x.kind.endsWith('header') || x.type === 8).map((x) => ({ ...x, timestamp: x.timestamp + span }))]);
  t.ok(after.length > 0, 'it goes on');
  t.not(p.rendition.initUri, firstInit, 'a new init');
  t.equal(p.file(firstInit), undefined, 'the old init is gone');
  t.match(renderMedia(p.rendition), /#EXT-X-DISCONTINUITY\n/, 'after a discontinuity');
});

t.test('listeners hear every change; a frame before any header is ignored', async (t) => {
  const p = packager();
  let heard = 0;
  const off = p.onChange(() => heard++);
  p.push([{ kind: 'frame', type: 9, codec: 7, timestamp: 0, body: Buffer.alloc(8) }]);
  t.equal(p.version, 0, 'nothing packaged');
  p.end();
  t.equal(heard, 1, 'the end is heard');
  off();
  p.end();
  t.equal(p.version, 1, 'ending twice changes nothing');
});

t.test('audio the muxer cannot package is left out: the stream plays as video', { skip: noFfmpeg }, async (t) => {
  const packets = flvPackets(makeFlv(dir, 'av')).map((x) => (x.type === 8 ? { ...x, codec: 2, body: Buffer.concat([Buffer.from([0x2f]), x.body.subarray(1)]) } : x));
  const p = packager();
  feed(t, p, packets);
  p.end();
  t.equal(p.audioSkipped, 'LLHLS_UNSUPPORTED_CODEC', 'says why');
  const r = p.rendition;
  const mp4 = writeMp4(join(dir, 'mp3-segments.mp4'), p.file(r.initUri)!.data, r.segments.map((s) => p.file(s.uri)!));
  t.same(probeStreams(mp4).map((s) => s.codec_type), ['video'], 'video only');
  t.equal(decode(mp4).errors, '', 'and it decodes');
});

for (const [what, shift] of [['back to 0 (a publisher that restarted its clock)', (span: number) => -span + 40], ['ahead by a minute', () => 60_000]] as const) {
  t.test(`a timestamp that jumps ${what} starts a new timeline after a discontinuity, and it plays`, { skip: noFfmpeg }, async (t) => {
    const packets = flvPackets(makeFlv(dir, 'av'));
    const span = packets.at(-1)!.timestamp + 40;
    const p = packager();
    feed(t, p, packets, 10_000);
    const before = p.rendition.segments.length;
    const after = feed(t, p, packets.filter((x) => !x.kind.endsWith('header')), 10_000 + span + shift(span));
    p.end();
    const r = p.rendition;
    t.ok(after.length > 0 && r.segments.length >= before + 2, `it goes on (${before} then ${r.segments.length} segments)`);
    t.equal(r.segments.filter((s) => s.discontinuity).length, 1, 'one discontinuity');
    const jump = r.segments.find((s) => s.discontinuity)!;
    t.ok(jump.independent, 'the new timeline starts at a keyframe');
    for (const s of r.segments) t.ok(s.duration < 1.5, `segment ${s.msn} lasts its GOP (${s.duration.toFixed(3)} s): no frame stretched over the jump`);
    t.same(checkPlaylist(renderMedia(r)), [], 'valid');
    const tail = writeMp4(join(dir, `jump-${shift(span)}.mp4`), p.file(r.initUri)!.data, r.segments.filter((s) => s.msn >= jump.msn).map((s) => p.file(s.uri)!));
    t.equal(decode(tail).errors, '', 'the new timeline decodes');
  });
}

t.test('a publisher that sends one keyframe only still gets segments closed, and memory stays bounded', { skip: noFfmpeg }, async (t) => {
  const packets = flvPackets(makeFlv(dir, 'av'));
  const span = packets.at(-1)!.timestamp + 40;
  let seen = false;
  // the FLV marks no keyframe after the first (the muxer and the packager read the tag's kind)
  const once = (round: number) => packets.filter((x) => round === 0 || !x.kind.endsWith('header')).map((x) => {
    if (x.kind !== 'keyframe') return { ...x, timestamp: x.timestamp + round * span };
    const first = !seen;
    seen = true;
    return { ...x, kind: first ? x.kind : 'frame' as const, timestamp: x.timestamp + round * span };
  });
  const p = packager({ windowSegments: 100 });
  for (let round = 0; round < 4; round++) feed(t, p, once(round));
  const r = p.rendition;
  t.ok(r.segments.length >= 3, `segments closed without keyframes (${r.segments.length})`);
  for (const s of r.segments) t.ok(s.duration <= 3.05, `segment ${s.msn} at most 3 target durations (${s.duration.toFixed(2)} s)`);
  t.equal(r.segments.filter((s) => s.independent).length, 1, 'only the first starts with a keyframe');

  const small = packager({ maxBytes: 100_000, windowSegments: 100 });
  seen = false;
  for (let round = 0; round < 4; round++) feed(t, small, once(round));
  t.ok(small.bytes <= 100_000 * 1.6, `a stream's bytes stay near its bound (${small.bytes})`);
});

t.test('a segment is its parts back to back, also one much larger than the segment before it', { skip: noFfmpeg }, async (t) => {
  // the frames of the second second grow by 20 kB each: that segment outgrows the room kept for it
  // (sized from the first), its later parts go elsewhere and the segment is put together at its close
  const packets = flvPackets(makeFlv(dir, 'av')).map((x) => (x.type === 9 && x.kind !== 'video-header' && x.timestamp >= 1000 && x.timestamp < 2000
    ? { ...x, body: Buffer.concat([x.body, Buffer.alloc(20_000, 7)]) } : x));
  const p = packager();
  for (const x of packets) p.push([x]);
  const r = p.rendition;
  t.ok(r.segments.length >= 2, `segments (${r.segments.length})`);
  const sizes = r.segments.map((s) => p.file(s.uri)!.data.length);
  t.ok(sizes[1]! > 2 * sizes[0]!, `the second segment much larger (${sizes.join(', ')})`);
  for (const s of r.segments) {
    const whole = Buffer.concat(s.parts.map((x) => p.file(x.uri)!.data));
    t.ok(p.file(s.uri)!.data.equals(whole), `segment ${s.msn} (${whole.length} bytes) is its ${s.parts.length} parts`);
  }
});
