// The DVR's recorded segments as CMAF (plugins/llhls/dvr-remux.ts): an ffmpeg-made FLV as the
// recorder stores it (the core's FLV-to-TS remux, one segment per keyframe), each segment remuxed
// alone; ffprobe and ffmpeg read the result, and the fragments' decode times line up.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlvToTs } from '../../../core/streams/remux/index.ts';
import { remuxRecorded, type RemuxedSegment } from '../../../plugins/llhls/dvr-remux.ts';
import { decode, flvPackets, makeFlv, noFfmpeg, probeStreams, trackSpans, writeMp4 } from './fmp4-helpers.ts';

/** `file`'s tags through the core's FLV-to-TS remux, a new segment at each video keyframe (as the recorder cuts). */
function segments(file: string): Buffer[] {
  const remux = new FlvToTs();
  const out: Buffer[][] = [[]];
  for (const p of flvPackets(file)) {
    if (p.kind === 'keyframe' && out.at(-1)!.length > 0) out.push([]);
    const ts = remux.push(p);
    if (ts) out.at(-1)!.push(ts);
  }
  return out.map((s) => Buffer.concat(s)).filter((b) => b.length > 0);
}

t.test('recorded segments remuxed one by one play as one CMAF stream', { skip: noFfmpeg }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dvr-remux-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const kind of ['av', 'video', 'audio'] as const) {
    const segs = segments(makeFlv(dir, kind));
    if (kind !== 'audio') t.ok(segs.length >= 3, `${kind}: ${segs.length} segments`);
    const remuxed = segs.map((s) => remuxRecorded(s)).filter((r): r is RemuxedSegment => r !== undefined);
    t.equal(remuxed.length, segs.filter((s) => s.length > 188 * 2).length, `${kind}: every segment with frames remuxes`);
    t.ok(remuxed.every((r) => r.init.equals(remuxed[0]!.init)), `${kind}: one init for all`);
    const file = writeMp4(join(dir, `${kind}.mp4`), remuxed[0]!.init, remuxed.map((r) => ({ data: r.fragment })));
    const streams = probeStreams(file);
    t.same(streams.map((s) => s.codec_type).sort(), kind === 'av' ? ['audio', 'video'] : [kind === 'video' ? 'video' : 'audio']);
    const video = streams.find((s) => s.codec_type === 'video');
    if (video) t.equal(Number(video.nb_read_frames), 75, `${kind}: every video frame (3 s at 25 fps)`);
    const audio = streams.find((s) => s.codec_type === 'audio');
    if (audio) t.ok(Number(audio.nb_read_frames) >= 125, `${kind}: the audio frames (${audio.nb_read_frames})`);
    t.same(decode(file), { status: 0, errors: '' }, `${kind}: decodes clean`);
    // each fragment starts where the one before ended (within a frame: the last one's duration is its previous one's)
    const scales = { 1: 90000, 2: 44100 };
    const spans = remuxed.map((r) => trackSpans(r.fragment, scales));
    for (let i = 1; i < spans.length; i++) {
      for (const [id, s] of spans[i]!) {
        const before = spans[i - 1]!.get(id);
        if (before) t.ok(Math.abs(s.start - before.end) <= 0.041, `${kind}: track ${id} fragment ${i} at ${s.start.toFixed(3)} follows ${before.end.toFixed(3)}`);
      }
    }
    // the TS clock kept: the first frame at the remux's 1.4 s offset, not at 0
    t.ok(spans[0]!.values().next().value!.start >= 1.3, `${kind}: decode times on the recording's clock`);
  }
});

t.test('what is not a recorded segment remuxes to nothing', async (t) => {
  t.equal(remuxRecorded(Buffer.alloc(0)), undefined);
  t.equal(remuxRecorded(Buffer.alloc(188 * 10, 0x47)), undefined);
  t.equal(remuxRecorded(Buffer.from('#EXTM3U\n')), undefined);
});
