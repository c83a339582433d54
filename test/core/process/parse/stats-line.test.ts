import t from 'tap';
import { createStatsLine, isStatsLine, parseStatsLine, type StatsLine } from '../../../../core/process/parse/stats-line.ts';

type Want = Partial<Omit<StatsLine, 'q'>> & { q?: number[] };

const cases: [string, string, Want][] = [
  [
    'classic line of the reference (16, ffmpeg/parse)',
    'frame= 5968 fps= 25 q=19.4 size=443kB time=00:03:58.44 bitrate=5632kbits/s speed=0.999x skip=9733 drop=3522 dup=87463',
    { frame: 5968, fps: 25, q: [19.4], sizeBytes: 453632, time: 238.44, bitrateKbits: 5632, speed: 0.999, drop: 3522, dup: 87463 },
  ],
  [
    'audio only (no frame=)',
    'size=     384kB time=00:00:24.55 bitrate= 128.0kbits/s speed=1.01x    ',
    { frame: NaN, q: [], sizeBytes: 384 * 1024, time: 24.55, bitrateKbits: 128, speed: 1.01 },
  ],
  [
    'last report of two video outputs (Lq=)',
    'frame=   75 fps= 25 q=21.0 Lq=5.0 size=N/A time=00:00:03.01 bitrate=N/A speed=0.996x    ',
    { frame: 75, q: [21, 5], sizeBytes: NaN, time: 3.01, bitrateKbits: NaN, speed: 0.996 },
  ],
  [
    'last report (Lsize=), stream copy q',
    'frame=   58 fps= 25 q=-1.0 Lsize=    1234kB time=00:00:02.32 bitrate=N/A speed=0.999x',
    { frame: 58, q: [-1], sizeBytes: 1234 * 1024, time: 2.32 },
  ],
  ['first update, speed N/A', 'size=N/A time=00:00:00.02 bitrate=N/A speed=N/A    ', { time: 0.02, speed: NaN, sizeBytes: NaN }],
  ['negative time before the first packet', 'frame=    0 fps=0.0 q=0.0 size=       0kB time=-00:00:00.04 bitrate=N/A speed=N/A', { frame: 0, time: NaN, sizeBytes: 0 }],
  ['padded speed', 'size=N/A time=00:00:01.50 bitrate=N/A speed=   1x', { speed: 1, time: 1.5 }],
  ['exponent speed', 'frame=100000 fps=5000 q=-0.0 size=N/A time=01:06:40.00 bitrate=N/A speed=1.2e+03x', { frame: 100000, speed: 1200, time: 4000 }],
  ['dup and drop before speed (ffmpeg order)', 'frame=  100 fps= 25 q=28.0 size=     512kB time=00:00:04.00 bitrate=1048.6kbits/s dup=3 drop=1 speed=   1x', { dup: 3, drop: 1, speed: 1 }],
  ['ffmpeg 7 KiB and elapsed', 'frame=  250 fps= 25 q=23.0 size=    1024KiB time=00:00:10.00 bitrate= 838.9kbits/s speed=   1x elapsed=0:00:10.01', { sizeBytes: 1024 * 1024, time: 10 }],
  ['long hours', 'frame=9 fps=1 q=1.0 size=1kB time=123:04:05.67 bitrate=1.0kbits/s speed=1x', { time: 123 * 3600 + 4 * 60 + 5.67 }],
];

t.test('stats lines', async (t) => {
  const out = createStatsLine();
  for (const [name, line, want] of cases) {
    t.equal(parseStatsLine(line, out), true, `${name}: recognised`);
    for (const [key, value] of Object.entries(want)) {
      t.same((out as unknown as Record<string, unknown>)[key], value, `${name}: ${key}`);
    }
  }
});

t.test('other lines are not stats and leave the output cleared', async (t) => {
  const out = createStatsLine();
  parseStatsLine('frame=1 q=3.0', out);
  for (const line of [
    '[libx264 @ 0x55] frame I:3     Avg QP:18.33  size:  9655',
    'video:272kB audio:24kB subtitle:0kB other streams:0kB global headers:0kB muxing overhead: unknown',
    '  Stream #0:0: Video: h264, yuv420p(progressive), 320x240, q=2-31, 25 fps',
    '',
  ]) {
    t.equal(isStatsLine(line), false, line);
    t.equal(parseStatsLine(line, out), false);
    t.ok(Number.isNaN(out.frame));
    t.same(out.q, []);
  }
});

t.test('a message start offset skips a level tag', async (t) => {
  const out = createStatsLine();
  t.equal(parseStatsLine('[info] frame=   13 fps=0.0 q=20.0 size=N/A time=00:00:00.52', out, 7), true);
  t.equal(out.frame, 13);
  t.equal(out.time, 0.52);
});
