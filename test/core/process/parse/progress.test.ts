import t from 'tap';
import { readFileSync } from 'node:fs';
import { Value } from '@sinclair/typebox/value';
import { ProgressParser, emptyProgress, splitLines, type LineKind, type ProgressParserOptions } from '../../../../core/process/parse/progress.ts';
import { ProgressSchema } from '../../../../core/process/parse/schemas.ts';

const fixture = (name: string) => splitLines(readFileSync(new URL(`../../../fixtures/ffmpeg/${name}`, import.meta.url), 'utf8'));
const STATS = /^(\[info\] )?L?(frame|size)=/;

/** Feeds lines with a fake clock that moves 500 ms before each stats line, as ffmpeg's cadence. */
function run(lines: readonly string[], options: ProgressParserOptions = {}) {
  let now = 0;
  const logged: [string, boolean][] = [];
  const parser = new ProgressParser({ now: () => now, log: { add: (l, p) => logged.push([l, p]) }, ...options });
  const kinds: Record<LineKind, number> = { log: 0, progress: 0, ignored: 0 };
  const sequence: LineKind[] = [];
  for (const line of lines) {
    if (STATS.test(line)) now += 500;
    const kind = parser.feed(line);
    kinds[kind]++;
    sequence.push(kind);
  }
  return { parser, kinds, logged, sequence, now };
}

t.test('the classic line of the reference, without any prelude', async (t) => {
  const { parser, kinds } = run(['frame= 5968 fps= 25 q=19.4 size=443kB time=00:03:58.44 bitrate=5632kbits/s speed=0.999x skip=9733 drop=3522 dup=87463']);
  t.equal(kinds.progress, 1, 'no mapping seen (log level too low): accepted at once');
  t.match(parser.progress, { frame: 5968, q: 19.4, size_kb: 443, time: 238.44, speed: 0.999, drop: 3522, dup: 87463 });
  t.equal(parser.progress.fps, 25, "ffmpeg's fps until a second is in the window");
  t.equal(parser.progress.bitrate_kbit, 5500, "ffmpeg's 5632 kbit/s (1000 bit/s) as bit/s / 1024");
  t.equal(parser.lastProgressAt, 500);
});

t.test('video and audio to HLS (recorded)', async (t) => {
  const { parser, kinds, logged } = run(fixture('hls-av.stderr'), { inputIds: ['video', 'audio'], outputIds: ['hls'] });
  t.same(kinds, { log: 52, progress: 7, ignored: 0 });
  t.equal(logged.filter(([, prelude]) => prelude).length, 36, 'lines before the first stats line are prelude');
  t.notOk(logged.some(([l]) => STATS.test(l)), 'no stats line reaches the log');
  const p = parser.progress;
  t.match(p, { frame: 75, q: 21, size_kb: 0, time: 3.01, speed: 0.995, drop: 0, dup: 0, packet: 0 });
  // frames 1,13,25,38,51,64,75 at 0.5 s steps: the completed seconds 0..2 hold 1, 24 and 26 frames
  t.equal(p.fps, (1 + 24 + 26) / 3);
  t.equal(p.bitrate_kbit, 0, 'the hls muxer reports no size');
  t.same(p.inputs.map((i) => [i.id, i.address, i.index, i.stream, i.format, i.type, i.codec, i.coder, i.pix_fmt, i.width, i.height, i.sampling_hz, i.layout, i.channels]), [
    ['video', 'testsrc2=size=320x240:rate=25', 0, 0, 'lavfi', 'video', 'rawvideo', 'rawvideo', 'yuv420p', 320, 240, undefined, undefined, undefined],
    ['audio', 'sine=frequency=440:sample_rate=44100', 1, 0, 'lavfi', 'audio', 'pcm_s16le', 'pcm_s16le', undefined, undefined, undefined, 44100, 'mono', 1],
  ]);
  t.same(p.outputs.map((o) => [o.id, o.address, o.index, o.stream, o.format, o.type, o.codec, o.coder, o.q]), [
    ['hls', 'live.m3u8', 0, 0, 'hls', 'video', 'h264', 'libx264', 21],
    ['hls', 'live.m3u8', 0, 1, 'hls', 'audio', 'aac', 'aac', 0],
  ]);
  t.notOk('width' in p.outputs[1]!, 'empty fields are omitted, not zero');
  t.equal(p.outputs[1]!.avstream, null);
  t.ok(Value.Check(ProgressSchema, parser.snapshot()), 'matches the Progress schema');
  t.equal(parser.lastProgressAt, 3500);
});

t.test('audio only counts as progress (the original let the stale watchdog kill it)', async (t) => {
  await t.test('to the null muxer (size N/A)', async (t) => {
    const { parser, kinds } = run(fixture('audio-null.stderr'));
    t.same(kinds, { log: 24, progress: 7, ignored: 0 });
    t.match(parser.progress, { frame: 0, time: 3, size_kb: 0, speed: 0.992 });
    t.equal(parser.lastProgressAt, 3500, 'each update moved the clock');
    t.equal(parser.idleFor(3600), 100);
    t.equal(parser.progress.outputs[0]!.codec, 'pcm_s16le');
  });
  await t.test('aac to mpegts', async (t) => {
    const { parser, kinds } = run(fixture('audio-mpegts.stderr'));
    t.same(kinds, { log: 26, progress: 8, ignored: 0 });
    t.match(parser.progress, { size_kb: 58, time: 3.01, speed: 0.997 });
    // 0, 16, 19 and 19 kB in the completed seconds 0..3
    t.equal(parser.progress.bitrate_kbit, (54 * 1024 * 8) / 4 / 1024);
    t.same(parser.progress.outputs.map((o) => [o.codec, o.coder, o.sampling_hz, o.layout]), [['aac', 'aac', 44100, 'mono']]);
  });
  await t.test('the line of the issue', async (t) => {
    let now = 1000;
    const parser = new ProgressParser({ now: () => now });
    t.equal(parser.feed('size=     384kB time=00:00:24.55 bitrate= 128.0kbits/s speed=1.01x'), 'progress');
    t.match(parser.progress, { size_kb: 384, time: 24.55, speed: 1.01 });
    t.equal(parser.lastProgressAt, 1000);
    now = 2000;
    parser.feed('size=     384kB time=00:00:24.55 bitrate= 128.0kbits/s speed=0.5x');
    t.equal(parser.lastProgressAt, 1000, 'a repeated position is no progress');
    t.equal(parser.idleFor(), 1000);
  });
});

t.test('two outputs (recorded): Output #1 printed first, one q= per video output', async (t) => {
  const { parser, kinds } = run(fixture('multi-output.stderr'), { outputIds: ['hls', 'check'] });
  t.same(kinds, { log: 61, progress: 7, ignored: 0 });
  t.same(parser.progress.outputs.map((o) => [o.id, o.index, o.stream, o.format, o.address, o.codec, o.coder, o.q]), [
    ['hls', 0, 0, 'hls', 'multi.m3u8', 'h264', 'libx264', 21],
    ['hls', 0, 1, 'hls', 'multi.m3u8', 'aac', 'aac', 0],
    ['check', 1, 0, 'null', 'pipe:', 'mpeg4', 'mpeg4', 5],
  ]);
  t.equal(parser.progress.q, 21);
});

t.test('three inputs and two outputs (recorded), with stream copy', async (t) => {
  const { parser, kinds } = run(fixture('three-inputs.stderr'));
  t.same(kinds, { log: 78, progress: 5, ignored: 0 });
  const p = parser.progress;
  t.same(p.inputs.map((i) => `${i.index}:${i.stream} ${i.format} ${i.type} ${i.codec} ${i.coder}`), [
    '0:0 lavfi video rawvideo rawvideo',
    '1:0 lavfi audio pcm_s16le pcm_s16le',
    '2:0 mov,mp4,m4a,3gp,3g2,mj2 video h264 copy',
    '2:1 mov,mp4,m4a,3gp,3g2,mj2 audio aac copy',
    '2:2 mov,mp4,m4a,3gp,3g2,mj2 subtitle mov_text ',
  ]);
  t.same(p.outputs.map((o) => `${o.index}:${o.stream} ${o.format} ${o.codec} ${o.coder} ${o.q}`), [
    '0:0 mpegts h264 libx264 21',
    '0:1 mpegts aac aac 0',
    '1:0 null h264 copy -1',
    '1:1 null aac copy 0',
  ]);
  t.match(p, { frame: 50, size_kb: 212, time: 2.02, speed: 0.995 });
});

t.test('tee muxer (recorded)', async (t) => {
  const { parser, kinds } = run(fixture('tee.stderr'));
  t.same(kinds, { log: 51, progress: 8, ignored: 0 });
  t.same(parser.progress.outputs.map((o) => [o.format, o.address, o.type]), [
    ['tee', '[f=mpegts]tee.ts|[f=hls:hls_time=1]tee.m3u8', 'video'],
    ['tee', '[f=mpegts]tee.ts|[f=hls:hls_time=1]tee.m3u8', 'audio'],
  ]);
  t.match(parser.progress, { frame: 75, time: 3.01 });
});

t.test('errors (recorded): everything is log, nothing is progress', async (t) => {
  const cases: [string, number, string][] = [
    ['error-missing-input.stderr', 12, 'does-not-exist.mp4: No such file or directory'],
    ['error-encoder-option.stderr', 23, 'Conversion failed!'],
    ['error-unknown-encoder.stderr', 15, "Unknown encoder 'nosuchencoder'"],
  ];
  for (const [name, lines, last] of cases) {
    const { parser, kinds, logged } = run(fixture(name));
    t.same(kinds, { log: lines, progress: 0, ignored: 0 }, name);
    t.equal(logged.at(-1)![0], last, `${name}: the error is the last log line`);
    t.ok(logged.every(([, prelude]) => prelude), `${name}: all of it is prelude`);
    t.same(parser.progress, emptyProgress(), `${name}: no progress`);
    t.equal(parser.lastProgressAt, undefined);
    t.equal(parser.preludeDone, false);
  }
  const { logged } = run(fixture('error-encoder-option.stderr'));
  t.ok(logged.some(([l]) => /\[libx264 @ 0x[0-9a-f]+\] Error setting preset\/tune nosuchpreset/.test(l)));
});

t.test('delayed prelude: stats arrive before all outputs are described', async (t) => {
  const lines = fixture('multi-output.stderr');
  const start = lines.findIndex((l) => l.startsWith('Output #0'));
  const firstStats = lines.findIndex((l) => STATS.test(l));
  const block = lines.slice(start, firstStats);
  const rest = lines.slice(firstStats);
  // Output #0's description now comes after two stats lines.
  const delayed = [...lines.slice(0, start), ...rest.slice(0, 2), ...block, ...rest.slice(2)];
  const { parser, kinds, sequence, logged } = run(delayed);
  t.same(kinds, { log: 61, progress: 5, ignored: 2 });
  t.same(sequence.filter((k) => k !== 'log').slice(0, 3), ['ignored', 'ignored', 'progress']);
  t.equal(parser.progress.outputs.length, 3);
  t.equal(logged.filter(([, prelude]) => prelude).length, 45, 'the late block still belongs to the prelude');
  t.equal(parser.progress.frame, 75);
});

t.test('a prelude that never matches the mapping is trusted after the grace lines', async (t) => {
  const lines = [
    "Input #0, lavfi, from 'testsrc2':",
    '  Stream #0:0: Video: rawvideo, yuv420p, 320x240, 25 tbr',
    'Stream mapping:',
    '  Stream #0:0 -> #0:0 (rawvideo (native) -> h264 (libx264))',
    '  Stream #0:0 -> #1:0 (rawvideo (native) -> mpeg4 (native))',
    "Output #0, null, to 'pipe:':",
    '  Stream #0:0: Video: h264, yuv420p, 320x240, q=2-31, 25 fps',
    ...Array.from({ length: 5 }, (_, i) => `frame=${i + 1} fps=0.0 q=20.0 size=N/A time=00:00:0${i}.00 bitrate=N/A speed=1x`),
  ];
  const graced = run(lines, { preludeGraceLines: 3 });
  t.same(graced.sequence.slice(-5), ['ignored', 'ignored', 'ignored', 'progress', 'progress']);
  t.equal(graced.parser.progress.outputs.length, 1);
  t.equal(graced.parser.progress.frame, 5);
  const strict = run(lines, { preludeGraceLines: 0 });
  t.equal(strict.kinds.progress, 0, '0 waits forever, as the original');
  t.equal(strict.parser.lastProgressAt, undefined);
});

t.test('-loglevel level+info tags do not hide stats or the prelude', async (t) => {
  const { parser, kinds, logged } = run(fixture('hls-av.stderr').map((l) => `[info] ${l}`));
  t.same(kinds, { log: 52, progress: 7, ignored: 0 });
  t.equal(parser.progress.outputs.length, 2);
  t.equal(parser.progress.frame, 75);
  t.equal(logged[0]![0].startsWith('[info] ffmpeg version'), true, 'the log keeps the line as written');
});

t.test('sliding window: steady 25 fps and 128 kB/s', async (t) => {
  let now = 0;
  const parser = new ProgressParser({ now: () => now, windowSeconds: 10 });
  for (let s = 1; s <= 40; s++) {
    now = s * 1000;
    parser.feed(`frame=${25 * s} fps=25 q=20.0 size=${128 * s}kB time=00:00:${String(s).padStart(2, '0')}.00 bitrate=1048.6kbits/s speed=1x`);
  }
  t.equal(parser.progress.fps, 25);
  t.equal(parser.progress.bitrate_kbit, 1024, '128 kB/s = 1024 kbit/s in 1024-bit units');
  // a stall: ffmpeg keeps printing, nothing moves
  for (let s = 41; s <= 45; s++) {
    now = s * 1000;
    parser.feed('frame=1000 fps=25 q=20.0 size=5120kB time=00:00:40.00 bitrate=1048.6kbits/s speed=0.9x');
  }
  t.equal(parser.progress.fps, 15, 'of the completed seconds 35..44 only 35..40 had frames');
  t.equal(parser.lastProgressAt, 40_000);
  t.equal(parser.idleFor(), 5000);
});

t.test('reset and ids', async (t) => {
  const { parser } = run(fixture('hls-av.stderr'));
  t.equal(parser.progress.outputs[0]!.id, '');
  parser.setIds(['a', 'b'], ['out']);
  t.same(parser.progress.inputs.map((i) => i.id), ['a', 'b']);
  t.equal(parser.progress.outputs[1]!.id, 'out');
  const snap = parser.snapshot();
  parser.reset();
  t.same(parser.progress, emptyProgress());
  t.equal(parser.preludeDone, false);
  t.equal(parser.lastProgressAt, undefined);
  t.equal(snap.frame, 75, 'a snapshot is a copy');
  t.equal(parser.feed(''), 'ignored');
});
