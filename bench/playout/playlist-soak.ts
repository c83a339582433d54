import '../../app/install.ts'; // this service's built-ins, installed into the core
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { CoreService } from '../../core/service.ts';
import { eventsRef, type EventsService } from '../../sdk/index.ts';
import { rtmpServiceRef, type RtmpService } from '../../plugins/rtmp/ref.ts';

/**
 * Soak of a 24/7 channel (issue 31, point 5): the real service with a looping 10-item playlist
 * (generated 320x240 clips of 3-8 s, two of another size, normalised) played by one process that
 * pushes it by RTMP to the service's own RTMP server (the sink); a player (ffprobe) reads the sink
 * and every video DTS is checked. Measured: sink reconnects (publishes after the first), joins whose
 * video step exceeds one frame, steps back, items played/skipped, and this process's RSS (sampled
 * every 10 s after a 60 s warm-up; aim: no growth over 5 %); audio steps too (no hole of a whole
 * AAC frame).
 * Run: `node bench/playout/playlist-soak.ts` (30 min); `SOAK_MINUTES=240` for longer, `SOAK_MINUTES=2` to try it.
 */

const MINUTES = Number(process.env.SOAK_MINUTES ?? 30);
const FRAME = 1 / 25;
/** One AAC frame at 48 kHz: an audio step of two (FLV's millisecond stamps: plus 2 ms) means a hole of a whole frame. */
const AUDIO_FRAME = 1024 / 48_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Steps of one stream's DTS: how many exceed `limit` (a frame, or for audio two), go back, and the largest. */
function track(limit: number) {
  const g = { over: 0, back: 0, max: 0, n: 0, last: undefined as number | undefined, add(t: number) {
    g.n++;
    if (g.last !== undefined) {
      const d = t - g.last;
      if (d < 0) g.back++;
      else if (d > limit + 0.002) g.over++;
      g.max = Math.max(g.max, d);
    }
    g.last = t;
  } };
  return g;
}

function makeClips(dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  return Array.from({ length: 10 }, (_, i) => {
    const size = i % 5 === 4 ? '480x270' : '320x240';
    const name = `item${i}.mp4`;
    const r = spawnSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=25:duration=${3 + (i % 6)}`,
      '-f', 'lavfi', '-i', `sine=frequency=${300 + i * 50}:sample_rate=48000:duration=${3 + (i % 6)}`,
      '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', join(dir, name)]);
    if (r.status !== 0) throw new Error(`clip ${name}: ${r.stderr.toString()}`);
    return `/videos/${name}`;
  });
}

type Kind = 'video' | 'audio';

/** Reads the sink with ffprobe; every packet's DTS goes through `onDts`. Restarts when the player ends. */
function player(url: string, onDts: (kind: Kind, t: number) => void, onRestart: () => void): { stop(): void } {
  let child: ChildProcess | undefined;
  let stopped = false;
  const start = () => {
    child = spawn('ffprobe', ['-v', 'error', '-rw_timeout', '10000000', '-show_entries', 'packet=codec_type,dts_time', '-of', 'csv=p=0', url],
      { stdio: ['ignore', 'pipe', 'ignore'] });
    createInterface({ input: child.stdout! }).on('line', (l) => {
      const [kind, t] = l.split(',');
      const n = Number(t);
      if ((kind === 'video' || kind === 'audio') && Number.isFinite(n)) onDts(kind, n);
    });
    child.on('close', () => { if (!stopped) { onRestart(); setTimeout(start, 1000); } });
  };
  start();
  return { stop: () => { stopped = true; child?.kill('SIGKILL'); } };
}

const dir = mkdtempSync(join(tmpdir(), 'playlist-soak-'));
let service: CoreService | undefined;
let play: { stop(): void } | undefined;
try {
  const items = makeClips(join(dir, 'disk', 'videos'));
  const configPath = join(dir, 'config.json');
  writeFileSync(configPath, JSON.stringify({
    address: '127.0.0.1:0', db: { dir: join(dir, 'db') }, log: { level: 'warn' }, update_check: false,
    storage: { disk: { dir: join(dir, 'disk') }, memory: { auth: { enable: false } } },
    rtmp: { enable: true, address: '127.0.0.1:0' }, playout: { enable: true, min_port: 32000, max_port: 32010 },
  }));
  service = await CoreService.start({ configPath, env: { PATH: process.env.PATH } });
  const kernel = service.app.kernel.services;
  const rtmp = kernel.resolve(rtmpServiceRef) as RtmpService;
  const events = kernel.resolve(eventsRef) as EventsService;
  const counts = { publishes: 0, started: 0, skipped: 0, playerRestarts: 0 };
  events.subscribe({ types: ['ingest.publish.start', 'playlist.item.started', 'playlist.item.skipped'] }, undefined, (e) => {
    if (e.type === 'ingest.publish.start') counts.publishes++;
    else if (e.type === 'playlist.item.started') counts.started++;
    else counts.skipped++;
  });
  const api = async (method: string, path: string, body: unknown) => {
    const r = await fetch(`${service!.url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
  };
  const format = { width: 320, height: 240, fps: 25, video_bitrate_kbit: 400, audio_bitrate_kbit: 64 };
  await api('PUT', '/api/v3/playlist/soak', { items: items.map((source) => ({ source })), loop: true, format });
  await api('POST', '/api/v3/process', {
    id: 'soak', reconnect: true, reconnect_delay_seconds: 1, autostart: true,
    input: [{ id: 'in', address: 'playlist:soak', options: [] }],
    output: [{ id: 'rtmp', address: '{rtmp,name=soak}', options: ['-c', 'copy', '-f', 'flv'] }],
  });
  const sink = `rtmp://127.0.0.1:${rtmp.ports().rtmp}/soak`;
  const gaps = { video: track(FRAME), audio: track(2 * AUDIO_FRAME) };
  // the channel against the wall clock: video media time read by the player against the time it took
  const pace = { media0: -1, wall0: 0, media: 0, wall: 0 };
  await sleep(5000);
  play = player(sink, (kind, t) => {
    gaps[kind].add(t);
    if (kind !== 'video') return;
    if (pace.media0 < 0) { pace.media0 = t; pace.wall0 = Date.now(); }
    pace.media = t;
    pace.wall = Date.now();
  }, () => { counts.playerRestarts++; gaps.video.last = gaps.audio.last = undefined; pace.media0 = -1; });
  const rss: number[] = [];
  const end = Date.now() + MINUTES * 60_000;
  const warm = Date.now() + Math.min(60_000, MINUTES * 30_000);
  const lead = () => (pace.media - pace.media0) - (pace.wall - pace.wall0) / 1000;
  let lead0: number | undefined;
  while (Date.now() < end) {
    await sleep(10_000);
    if (Date.now() <= warm) continue;
    rss.push(process.memoryUsage().rss);
    lead0 ??= lead(); // after the warm-up: the player's first burst (a GOP at once) is not drift
  }
  const mb = (b: number) => Math.round(b / 1048576 * 10) / 10;
  const drift = rss.length > 1 ? (rss.at(-1)! - rss[0]!) / rss[0]! * 100 : 0;
  const result = {
    minutes: MINUTES, items_started: counts.started, items_skipped: counts.skipped, sink_reconnects: Math.max(0, counts.publishes - 1),
    player_restarts: counts.playerRestarts, video_packets: gaps.video.n, joins_over_one_frame: gaps.video.over, steps_back: gaps.video.back + gaps.audio.back,
    largest_step_s: Math.round(gaps.video.max * 1000) / 1000, audio_packets: gaps.audio.n, audio_holes_of_a_frame: gaps.audio.over,
    largest_audio_step_s: Math.round(gaps.audio.max * 1000) / 1000,
    // from the warm-up to the end: negative, the channel fell behind the wall clock by that much; positive, it ran ahead
    media_minus_wall_s: Math.round((lead() - (lead0 ?? lead())) * 100) / 100, rss_mb: { first: mb(rss[0] ?? 0), last: mb(rss.at(-1) ?? 0), max: mb(Math.max(0, ...rss)) },
    rss_drift_percent: Math.round(drift * 10) / 10,
  };
  console.log(JSON.stringify(result, null, 2));
  // RSS may fall (the heap settles); only growth over 5 % fails
  const ok = result.sink_reconnects === 0 && result.joins_over_one_frame === 0 && result.audio_holes_of_a_frame === 0 && result.steps_back === 0 && drift <= 5;
  console.log(ok ? 'PASS' : 'FAIL');
  process.exitCode = ok ? 0 : 1;
} finally {
  play?.stop();
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
}
