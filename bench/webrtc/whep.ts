import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loaderArgs } from '../runtime/loader.ts';
import { Child, sleep } from './ipc.ts';
import { measureDelay, type DelayResult } from './whep-delay.ts';
import { fanOut, Viewers, type FanRow, type Target } from './whep-fanout.ts';
import { descendants, killAll, startTime } from './whep-proc.ts';
import { writeReport, type ServiceLog } from './whep-report.ts';

/**
 * WHEP latency and fan-out of the webrtc plugin (issue 33, point 5), in one run against the real
 * service in its own OS process (`whep-service.ts`: RTMP and WebRTC on, a token, loopback only):
 *
 * 1. Glass-to-glass delay: `whep-publisher.ts` draws Date.now() as a barcode into raw 1280x720
 *    25 fps frames piped into ffmpeg (x264 ultrafast zerolatency, 2.5 Mbit/s, AAC of a sine written
 *    in step with the frames) that publishes over RTMP; headless Chromium plays the service's
 *    player page and reads the barcode of every
 *    presented frame (`whep-delay.ts`): p50/p95/max over a window after a warm-up. Once alone,
 *    once more while WHEP_DELAY_LOADED node viewers also watch.
 * 2. CPU per viewer: 1, 10, 50 WHEP viewers (node-datachannel in `whep-viewer.ts` processes, the
 *    viewer offers) in alternating rounds; per 20 s window the CPU (utime + stime, all threads) and
 *    RSS of the service, its WebRTC host process and the feed ffmpeg, and what each viewer got.
 *
 *   export PATH="$(dirname $(bash scripts/node.sh)):$PATH"
 *   node bench/webrtc/whep.ts [seconds per fan-out window, default 20] [rounds, default 3] \
 *     [viewer counts, default 1,10,50] [delay window seconds, default 40]
 *
 * Env: WHEP_WARM_S (delay warm-up, 10), WHEP_DELAY_LOADED (viewers during the second delay
 * window, 50; 0 skips it), WHEP_AUDIO (the publisher's audio: pipe, lavfi or none, see
 * whep-publisher.ts; default pipe), WHEP_TAG (file name suffix), WHEP_OUT (results folder, default
 * bench/results). Needs ffmpeg (libx264, AAC) and Chromium (/usr/bin/chromium, or CHROMIUM).
 * Writes <out>/webrtc-whep-<date>[-tag].{md,json}; an existing file is never overwritten.
 */
const WINDOW_S = Number(process.argv[2] ?? 20);
const ROUNDS = Number(process.argv[3] ?? 3);
const COUNTS = (process.argv[4] ?? '1,10,50').split(',').map(Number);
const DELAY_S = Number(process.argv[5] ?? 40);
const WARM_S = Number(process.env.WHEP_WARM_S ?? 10);
const DELAY_LOADED = Number(process.env.WHEP_DELAY_LOADED ?? 50);
const AUDIO = process.env.WHEP_AUDIO ?? 'pipe';
const STREAM = 'live/bench';
const TOKEN = 'whep-bench-token';
const HERE = fileURLToPath(new URL('.', import.meta.url));

/** Everything started here that must not outlive the bench. */
const started: { service?: ChildProcess; seen: Map<number, string> } = { seen: new Map() };
const remember = (pid: number) => { if (!started.seen.has(pid)) started.seen.set(pid, startTime(pid)); };
process.on('exit', () => { killAll(started.seen); });

/** The service in its own process; its warn and error lines kept. */
async function startService(dir: string, log: ServiceLog): Promise<{ base: string; rtmp: number; proc: ChildProcess }> {
  const proc = fork(join(HERE, 'whep-service.ts'), [dir, TOKEN], { execArgv: loaderArgs(), stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  started.service = proc;
  const keep = (d: Buffer) => {
    for (const line of d.toString().split('\n').filter((l) => l.trim())) {
      log.count++;
      let msg = line.slice(0, 200);
      try { msg = String((JSON.parse(line) as { msg?: unknown }).msg ?? msg); } catch { /* not JSON */ }
      log.byMsg[msg] = (log.byMsg[msg] ?? 0) + 1;
      if (log.byMsg[msg] === 1 && log.lines.length < 30) log.lines.push(line.slice(0, 600));
    }
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const m = await new Promise<{ url: string; rtmp: number }>((resolve, reject) => {
    proc.once('message', (x) => resolve(x as { url: string; rtmp: number }));
    proc.once('exit', (code) => reject(new Error(`the service exited (${code}): ${log.lines.join('\n')}`)));
  });
  return { base: m.url, rtmp: m.rtmp, proc };
}

async function stopService(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.send('stop');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
  await gone;
  clearTimeout(timer);
}

/** The publisher, and the stream readable at the service (its player page answers 200). */
async function startPublisher(base: string, rtmp: number): Promise<{ publisher: Child; ffmpeg: number }> {
  const publisher = new Child(join(HERE, 'whep-publisher.ts'), [`rtmp://127.0.0.1:${rtmp}/${STREAM}`, AUDIO]);
  remember(publisher.pid);
  const ready = await publisher.next((m) => m.ready === true, 30_000, 'publisher ready');
  const ffmpeg = Number(ready.ffmpegPid);
  remember(ffmpeg);
  for (let i = 0; i < 100; i++) {
    const r = await fetch(`${base}/webrtc/${STREAM}?token=${TOKEN}`);
    await r.arrayBuffer();
    if (r.status === 200) return { publisher, ffmpeg };
    await sleep(200);
  }
  throw new Error('the stream did not appear at the service');
}

/** The second delay window, with `n` node viewers watching too. */
async function loadedDelay(t: Target, pageUrl: string, n: number): Promise<DelayResult & { viewersUp: number; failures: string[] }> {
  const viewers = await Viewers.start(n);
  try {
    const { timings, failures } = await viewers.connect(t, n);
    const d = await measureDelay(`with ${timings.length} node viewers`, pageUrl, WARM_S, DELAY_S);
    await viewers.close();
    return { ...d, viewersUp: timings.length, failures };
  } finally {
    await viewers.stop();
  }
}

async function run(dir: string, log: ServiceLog): Promise<void> {
  const loads: { at: string; load: number[] }[] = [{ at: 'start', load: loadavg() }];
  const svc = await startService(dir, log);
  const { publisher, ffmpeg } = await startPublisher(svc.base, svc.rtmp);
  const t: Target = { base: svc.base, stream: STREAM, token: TOKEN, servicePid: svc.proc.pid!, publisher, publisherFfmpeg: ffmpeg };
  const watch = setInterval(() => { for (const p of descendants(t.servicePid)) remember(p); }, 1000);
  try {
    const pageUrl = `${svc.base}/webrtc/${STREAM}?token=${TOKEN}`;
    const delays: DelayResult[] = [await measureDelay('alone', pageUrl, WARM_S, DELAY_S)];
    console.log(JSON.stringify({ ...delays[0], delays: undefined }));
    loads.push({ at: 'after delay', load: loadavg() });
    const rows: FanRow[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const n of round % 2 ? COUNTS : [...COUNTS].reverse()) {
        const row = await fanOut(t, n, round, WINDOW_S);
        rows.push(row);
        console.log(JSON.stringify({ ...row, timings: undefined }));
        await sleep(1000);
      }
      loads.push({ at: `after round ${round}`, load: loadavg() });
    }
    if (DELAY_LOADED > 0) {
      const d = await loadedDelay(t, pageUrl, DELAY_LOADED);
      delays.push(d);
      console.log(JSON.stringify({ ...d, delays: undefined }));
      loads.push({ at: 'after loaded delay', load: loadavg() });
    }
    const pub = publisher.next((m) => m.stats === true, 5000, 'publisher stats');
    publisher.send({ stats: true });
    const pubStats = await pub;
    await writeReport({ windowS: WINDOW_S, rounds: ROUNDS, counts: COUNTS, delayS: DELAY_S, warmS: WARM_S, audio: AUDIO, delays, rows, loads, log, publisher: pubStats });
  } finally {
    clearInterval(watch);
    await publisher.stop();
    await stopService(svc.proc);
  }
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'whep-bench-'));
  const log: ServiceLog = { count: 0, byMsg: {}, lines: [] };
  try {
    await run(dir, log);
  } finally {
    if (started.service && started.service.exitCode === null) started.service.kill('SIGKILL');
    await sleep(500);
    const left = killAll(started.seen);
    if (left.length) console.error(`left behind and killed: ${left.join('; ')}`);
    await rm(dir, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), (e: Error) => { console.error(e); process.exit(1); });
