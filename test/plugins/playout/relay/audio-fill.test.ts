import t from 'tap';
import { spawnSync } from 'node:child_process';
import { Splicer } from '../../../../plugins/playout/relay/splicer.ts';
import { TsInput } from '../../../../plugins/playout/relay/ts-input.ts';
import { splitPackets } from '../../../../plugins/playout/relay/ts-packet.ts';
import { AdtsCounter, adtsFormat, silentFrame } from '../../../../plugins/playout/relay/silence.ts';

/*
 * Gapless audio across splices (real ffmpeg makes the inputs, ffprobe reads the output): items whose
 * audio starts late, ends early, or is digital silence (ffmpeg's muxer then packs several AAC frames
 * into one PES) are spliced, and the output's audio must run on with no hole of a whole frame and
 * no overlap; the silent frames the splicer makes decode to silence.
 */

const AUDIO_FRAME = 1024 / 48_000;

function ts(seconds: number, audio: string[], late = 0): TsInputData {
  const r = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc2=size=160x120:rate=25`,
    ...(late ? ['-itsoffset', String(late)] : []), '-f', 'lavfi', '-i', audio.join(':'), '-t', String(seconds),
    '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-c:a', 'aac', '-ar', '48000', '-ac', '2', '-b:a', '64k',
    '-pes_payload_size', '0', '-f', 'mpegts', 'pipe:1'], { maxBuffer: 1 << 26 });
  const packets: Buffer[] = [];
  splitPackets(r.stdout, packets);
  return { packets };
}
interface TsInputData { packets: Buffer[] }

function splice(parts: TsInputData[], fillAudio = true): { out: Buffer; filled: number } {
  const out: Buffer[] = [];
  const s = new Splicer((p) => out.push(Buffer.from(p)), { fillAudio });
  for (const part of parts) {
    const input = new TsInput();
    s.begin(input);
    for (const p of part.packets) { input.observeTables(p); s.feed(Buffer.from(p)); }
  }
  return { out: Buffer.concat(out), filled: s.filled };
}

/** Audio packets as ffprobe splits them (one per AAC frame): [dts, duration] in seconds. */
function audioFrames(ts: Buffer): Array<[number, number]> {
  const r = spawnSync('ffprobe', ['-v', 'error', '-select_streams', 'a:0', '-show_entries', 'packet=dts_time,duration_time',
    '-of', 'csv=p=0', '-f', 'mpegts', '-i', 'pipe:0'], { input: ts, maxBuffer: 1 << 26 });
  return r.stdout.toString().split('\n').filter((l) => l.trim()).map((l) => l.split(',').slice(0, 2).map(Number) as [number, number]);
}

function holes(frames: Array<[number, number]>): { maxGap: number; overlaps: number } {
  let maxGap = 0;
  let overlaps = 0;
  for (let i = 1; i < frames.length; i++) {
    const gap = frames[i]![0] - (frames[i - 1]![0] + frames[i - 1]![1]);
    if (gap < -0.0005) overlaps++;
    maxGap = Math.max(maxGap, gap);
  }
  return { maxGap, overlaps };
}

t.test('late, early and silent audio: the spliced audio has no hole of a frame and no overlap', async (t) => {
  const tone = ['sine=r=48000', 'frequency=440'];
  const parts = [
    ts(1, tone),
    ts(1.2, tone, 0.3), // audio starts 0.3 s after the video
    ts(1.2, [...tone, 'duration=0.6']), // audio ends 0.6 s before the video
    ts(1, ['anullsrc=r=48000', 'cl=stereo']), // digital silence: several frames per PES
    ts(1, tone),
  ];
  const { out, filled } = splice(parts);
  const frames = audioFrames(out);
  const h = holes(frames);
  t.ok(filled > 20, `silent frames filled in: ${filled}`);
  t.equal(h.overlaps, 0, 'no audio frame overlaps the one before');
  t.ok(h.maxGap < AUDIO_FRAME, `largest hole ${(h.maxGap * 1000).toFixed(1)} ms, under one audio frame (${(AUDIO_FRAME * 1000).toFixed(1)} ms)`);
  const withoutFill = holesWithout(parts);
  t.ok(withoutFill > 0.2, `the same inputs had a hole of ${withoutFill.toFixed(3)} s before filling (the test would fail without it)`);
  const decoded = spawnSync('ffmpeg', ['-hide_banner', '-v', 'error', '-f', 'mpegts', '-i', 'pipe:0', '-map', 'a:0', '-f', 'null', '-'], { input: out });
  t.equal(decoded.stderr.toString().trim(), '', 'ffmpeg decodes the whole audio track without an error');
});

/** The largest hole the same inputs leave without filling. */
function holesWithout(parts: TsInputData[]): number {
  const { out } = splice(parts, false);
  return holes(audioFrames(out)).maxGap;
}

t.test('silent frames decode to silence for every channel layout and rate', async (t) => {
  for (const [rate, index] of [[48_000, 3], [44_100, 4], [22_050, 7]] as const) {
    for (const channels of [1, 2, 6, 7]) {
      const header = Buffer.from([0xff, 0xf1, 0x40 | (index << 2) | (channels >> 2), (channels & 3) << 6, 0, 0x1f, 0xfc]);
      const f = adtsFormat(header, 0)!;
      const frames = Buffer.concat(Array.from({ length: 40 }, () => silentFrame(f)));
      const r = spawnSync('ffmpeg', ['-hide_banner', '-v', 'info', '-f', 'aac', '-i', 'pipe:0', '-af', 'astats=measure_perchannel=none', '-f', 'null', '-'], { input: frames });
      const log = r.stderr.toString();
      t.match(log, new RegExp(`Audio: aac \\(LC\\), ${rate} Hz`), `${rate} Hz, ${channels}-channel configuration read back`);
      t.match(log, /Peak level dB: -inf/, `${rate} Hz, configuration ${channels}: silence`);
      t.notMatch(log, /rror/, 'no decoding error');
    }
  }
  t.equal(adtsFormat(Buffer.from([0xff, 0xf0, 0x4c, 0x80, 0, 0, 0]), 0), undefined, 'a header with a CRC is not used');
  t.equal(adtsFormat(Buffer.from([0x47, 0xf1, 0x4c, 0x80, 0, 0, 0]), 0), undefined, 'no sync word');
  t.equal(adtsFormat(Buffer.from([0xff, 0xf1, 0x4c | 0x3c, 0x80, 0, 0, 0]), 0), undefined, 'a reserved rate index');
});

t.test('the ADTS frame count of a PES holds however its bytes are cut into packets', async (t) => {
  const r = spawnSync('ffmpeg', ['-hide_banner', '-v', 'error', '-f', 'lavfi', '-i', 'sine=r=48000:d=1', '-c:a', 'aac', '-f', 'adts', 'pipe:1']);
  const adts = r.stdout;
  let frames = 0;
  for (let i = 0; i < adts.length; i += ((adts[i + 3]! & 3) << 11) | (adts[i + 4]! << 3) | (adts[i + 5]! >> 5)) frames++;
  for (const size of [1, 5, 7, 100, 184, adts.length]) {
    const c = new AdtsCounter();
    c.start(adts.subarray(0, Math.min(size, adts.length)), 0);
    for (let i = size; i < adts.length; i += size) c.feed(adts.subarray(i, i + size), 0);
    t.equal(c.frames, frames, `${frames} frames counted in chunks of ${size} bytes`);
  }
  const c = new AdtsCounter();
  c.start(Buffer.concat([adts.subarray(0, 400), Buffer.alloc(50, 0x11), adts.subarray(400)]), 0);
  t.ok(c.frames > 0 && c.frames < frames, 'garbage stops the count (until the next PES)');
});
