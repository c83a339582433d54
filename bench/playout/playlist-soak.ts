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
 * every 10 s after a 60 s warm-up; aim: flat within 5 %).
 * Run: `node bench/playout/playlist-soak.ts` (30 min); `SOAK_MINUTES=240` for longer, `SOAK_MINUTES=2` to try it.
 */

const MINUTES = Number(process.env.SOAK_MINUTES ?? 30);
const FRAME = 1 / 25;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

/** Reads the sink with ffprobe; every video DTS goes through `onDts`. Restarts when the player ends. */
function player(url: string, onDts: (t: number) => void, onRestart: () => void): { stop(): void } {
  let child: ChildProcess | undefined;
  let stopped = false;
  const start = () => {
    child = spawn('ffprobe', ['-v', 'error', '-rw_timeout', '10000000', '-select_streams', 'v:0', '-show_entries', 'packet=dts_time', '-of', 'csv=p=0', url],
      { stdio: ['ignore', 'pipe', 'ignore'] });
    createInterface({ input: child.stdout! }).on('line', (l) => { const n = Number(l.replace(/,$/, '')); if (Number.isFinite(n)) onDts(n); });
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
  let last: number | undefined;
  const gaps = { over: 0, back: 0, max: 0, n: 0 };
  const onDts = (t: number) => {
    gaps.n++;
    if (last !== undefined) {
      const d = t - last;
      if (d < 0) gaps.back++;
      else if (d > FRAME + 0.002) gaps.over++;
      gaps.max = Math.max(gaps.max, d);
    }
    last = t;
  };
  await sleep(5000);
  play = player(sink, onDts, () => { counts.playerRestarts++; last = undefined; });
  const rss: number[] = [];
  const end = Date.now() + MINUTES * 60_000;
  const warm = Date.now() + Math.min(60_000, MINUTES * 30_000);
  while (Date.now() < end) {
    await sleep(10_000);
    if (Date.now() > warm) rss.push(process.memoryUsage().rss);
  }
  const mb = (b: number) => Math.round(b / 1048576 * 10) / 10;
  const drift = rss.length > 1 ? (rss.at(-1)! - rss[0]!) / rss[0]! * 100 : 0;
  const result = {
    minutes: MINUTES, items_started: counts.started, items_skipped: counts.skipped, sink_reconnects: Math.max(0, counts.publishes - 1),
    player_restarts: counts.playerRestarts, video_packets: gaps.n, joins_over_one_frame: gaps.over, steps_back: gaps.back,
    largest_step_s: Math.round(gaps.max * 1000) / 1000, rss_mb: { first: mb(rss[0] ?? 0), last: mb(rss.at(-1) ?? 0), max: mb(Math.max(0, ...rss)) },
    rss_drift_percent: Math.round(drift * 10) / 10,
  };
  console.log(JSON.stringify(result, null, 2));
  const ok = result.sink_reconnects === 0 && result.joins_over_one_frame === 0 && result.steps_back === 0 && Math.abs(drift) <= 5;
  console.log(ok ? 'PASS' : 'FAIL');
  process.exitCode = ok ? 0 : 1;
} finally {
  play?.stop();
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
}
