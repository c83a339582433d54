import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FlvPacket } from '../../../sdk/index.ts';
import { Fmp4Muxer, initSegment } from '../../../plugins/llhls/fmp4.ts';
import { decode, flvPackets, keyframeTimes, makeFlv, mux, noFfmpeg, probeStreams, writeMp4 } from './fmp4-helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'fmp4-test-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const FPS = 25;
const AAC_FRAME = 1024 / 44100;

for (const kind of ['av', 'video', 'audio'] as const) {
  t.test(`${kind}: init + fragments play as the FLV did`, { skip: noFfmpeg }, async (t) => {
    const flv = makeFlv(dir, kind);
    const packets = flvPackets(flv);
    const { init, fragments } = mux(packets);
    const mp4 = writeMp4(join(dir, `${kind}.mp4`), init, fragments);
    const want = probeStreams(flv);
    const got = probeStreams(mp4);
    t.same(got.map((s) => [s.codec_type, s.codec_name]), want.map((s) => [s.codec_type, s.codec_name]), 'the same codecs');
    for (const w of want) {
      const g = got.find((s) => s.codec_type === w.codec_type)!;
      t.equal(g.nb_read_frames, w.nb_read_frames, `${w.codec_type}: every frame`);
      const frames = Number(w.nb_read_frames);
      const frame = w.codec_type === 'video' ? 1 / FPS : AAC_FRAME;
      // the mp4's track duration counts from 0 (no edit list): the track's first DTS, then its frames
      const first = packets.find((p) => p.type === (w.codec_type === 'video' ? 9 : 8) && p.kind !== 'video-header' && p.kind !== 'audio-header')!;
      const end = first.timestamp / 1000 + frames * frame;
      t.ok(Math.abs(Number(g.duration) - end) <= frame + 1e-6, `${w.codec_type}: duration ${g.duration} within a frame of ${end}`);
      if (w.codec_type === 'video') t.equal(g.width, 320);
      if (w.codec_type === 'audio') t.equal(g.sample_rate, '44100');
    }
    if (kind !== 'audio') t.same(keyframeTimes(mp4), keyframeTimes(flv), 'keyframes where the FLV had them');
    const d = decode(mp4);
    t.equal(d.errors, '', 'ffmpeg decodes without an error');
    t.equal(d.status, 0);
    t.same(fragments.map((f) => f.sequence), fragments.map((_, i) => i + 1), 'mfhd sequence numbers 1, 2, ...');
    for (let i = 1; i < fragments.length; i++) {
      const a = fragments[i - 1]!;
      t.ok(Math.abs(a.start + a.duration - fragments[i]!.start) < 1e-6, `fragment ${i + 1} starts where ${i} ended`);
    }
  });
}

t.test('each fragment starting at a keyframe decodes alone after the init', { skip: noFfmpeg }, async (t) => {
  const flv = makeFlv(dir, 'av');
  const { init, fragments } = mux(flvPackets(flv));
  const independent = fragments.filter((f) => f.independent);
  t.ok(independent.length >= 3, `a keyframe every second: ${independent.length} independent fragments`);
  t.ok(fragments.length > independent.length * 2, 'and parts between them');
  for (const f of independent) {
    const mp4 = writeMp4(join(dir, `alone-${f.sequence}.mp4`), init, [f]);
    const d = decode(mp4);
    t.equal(d.errors, '', `fragment ${f.sequence} decodes alone`);
    t.equal(d.status, 0);
    const video = probeStreams(mp4).find((s) => s.codec_type === 'video')!;
    t.ok(Number(video.nb_read_frames) >= 1, `fragment ${f.sequence}: ${video.nb_read_frames} frames`);
  }
});

t.test('parts of ~300 ms, segments cut at keyframes', { skip: noFfmpeg }, async (t) => {
  const { fragments } = mux(flvPackets(makeFlv(dir, 'video')));
  // a part is cut at the first packet at or past its target: at most a frame longer
  for (const f of fragments.slice(0, -1)) t.ok(f.duration > 0 && f.duration <= 0.3 + 1 / FPS + 1e-6, `fragment ${f.sequence}: ${f.duration} s`);
  t.same(fragments.filter((f) => f.independent).map((f) => f.start), [0, 1, 2], 'independent fragments start at the keyframes');
  // the video trun's sample flags (ffprobe's key flags come from the H.264 parser, not from them)
  for (const f of fragments) {
    const trun = f.data.indexOf('trun', 0, 'latin1') - 4;
    const count = f.data.readUInt32BE(trun + 12);
    const flags = Array.from({ length: count }, (_, i) => f.data.readUInt32BE(trun + 20 + i * 16 + 8));
    const want = flags.map((_, i) => (i === 0 && f.independent ? 0x02000000 : 0x01010000));
    t.same(flags, want, `fragment ${f.sequence}: sync only at its keyframe`);
  }
});

function header(type: 8 | 9, body: number[]): FlvPacket {
  return { kind: type === 9 ? 'video-header' : 'audio-header', type, codec: type === 9 ? 7 : 10, timestamp: 0, body: Buffer.from(body) };
}

t.test('a malformed sequence header throws a stable code', async (t) => {
  const m = new Fmp4Muxer();
  t.throws(() => m.push(header(9, [0x17, 0])), { code: 'LLHLS_BAD_AVC_CONFIG' }, 'no record');
  t.throws(() => m.push(header(9, [0x17, 0, 0, 0, 0, 1, 0x64, 0, 0x1f, 0xff, 0xe1, 0, 9, 0x67])), { code: 'LLHLS_BAD_AVC_CONFIG' }, 'an SPS running past the end');
  t.throws(() => m.push(header(9, [0x17, 0, 0, 0, 0, 1, 0x64, 0, 0x1f, 0xff, 0xe1, 0, 2, 0x67, 0x64, 1, 0, 1, 0x68])), { code: 'LLHLS_BAD_AVC_CONFIG' }, 'a truncated SPS');
  t.throws(() => m.push(header(8, [0xaf, 0])), { code: 'LLHLS_BAD_AAC_CONFIG' }, 'no AudioSpecificConfig');
  t.throws(() => m.push(header(8, [0xaf, 0, 0x17, 0x90])), { code: 'LLHLS_BAD_AAC_CONFIG' }, 'a sampling frequency index of 15');
  t.throws(() => m.push({ ...header(9, [0x1c, 0, 0, 0, 0]), codec: 12 }), { code: 'LLHLS_UNSUPPORTED_CODEC' }, 'HEVC');
  t.equal(m.init(), undefined, 'no track was taken');
});

t.test('a changed sequence header mid-stream is a new init, not muxed silently', { skip: noFfmpeg }, async (t) => {
  const packets = flvPackets(makeFlv(dir, 'video'));
  const m = new Fmp4Muxer();
  for (const p of packets.slice(0, 40)) m.push(p);
  const before = m.init()!;
  const head = packets.find((p) => p.kind === 'video-header')!;
  const body = Buffer.from(head.body);
  body[6] = 0x4d; // another profile in the record: another configuration
  const r = m.push({ ...head, body, timestamp: 2000 });
  t.equal(r.kind, 'new-init');
  if (r.kind !== 'new-init') return;
  t.ok(r.last && r.last.duration > 0, 'the samples taken so far come out under the old init');
  t.notSame(m.init(), before, 'init() is the new one');
  t.equal(m.push(packets.find((p) => p.kind === 'frame')!).kind, 'ignored', 'frames wait for a keyframe');
  t.equal(m.push(head).kind, 'header', 'no sample taken since: a header replaces the track without a new init');
  t.equal(m.push({ ...packets.find((p) => p.kind === 'keyframe')!, timestamp: 2040 }).kind, 'sample');
  t.equal(m.push(head).kind, 'ignored', 'the same header again changes nothing');
  const back = m.push({ ...head, body, timestamp: 2080 });
  t.equal(back.kind, 'new-init', 'a change after a sample is a new init');
  if (back.kind === 'new-init') t.equal(back.last?.independent, true, 'its last fragment holds that keyframe');
  t.same(initSegment(m.tracks()), m.init());
  const track = m.tracks()[0]!;
  t.same(track.kind === 'video' && [track.width, track.height, track.codec], [320, 180, 'avc1.4d000c'], 'the SPS size, cropped (180 of 192 rows), and the RFC 6381 codec of the record (profile 0x4d as changed)');
});
