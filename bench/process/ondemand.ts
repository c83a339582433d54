import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loaderArgs } from '../runtime/loader.ts';
import { api, cpuSeconds, mean, rssMb, sleep, uptime } from '../s3/measure.ts';

/**
 * On-demand processes against always-on ones (issue 34, point 4). The service runs in a child
 * process (`ondemand-service.ts`, default plugins, log level error), fresh for every round; PROCS
 * processes each remux one small pre-encoded looping file (`-re -stream_loop -1 -c copy`: testsrc2
 * 160x120 10 fps H.264, a keyframe a second, ~60 kbit/s) to HLS in memfs (`-hls_time 1
 * -hls_list_size 4 -hls_flags delete_segments -method PUT`, `p<i>.m3u8`, `p<i>_%d.ts`).
 * - Round A (`ondemand`): `ondemand: { enable: true, idle_seconds: 10 }`, WATCHED of them polled
 *   like a player (GET the playlist every second) from the warm-up on.
 * - Round B (`always`): the same processes without `ondemand` (autostart), the same WATCHED polled.
 * Per round, over a WINDOW_S window after WARM_S of warm-up: the service's CPU (utime + stime from
 * /proc/<pid>/stat: its ffmpeg children excluded), its RSS (VmRSS each second: mean, max), its
 * ffmpeg children (each second: mean, max), their CPU together (pids alive at both ends), and
 * whether every watched playlist was ffmpeg's own at the end. Rounds alternate A, B, A, B...
 * Then COLD cold starts on a fresh service with PROCS on-demand processes (idle_seconds 2), one at
 * a time, each a different waiting process: the time from the first GET of its playlist (polled
 * every POLL_MS) until the answer is ffmpeg's playlist (no `## on demand: waiting` mark, an
 * `#EXTINF`, as the e2e test tells them apart); p50, p95, max.
 *
 * Env: ODBENCH_PROCS (100), ODBENCH_WATCHED (5), ODBENCH_ROUNDS (pairs, 2), ODBENCH_WINDOW_S (60),
 * ODBENCH_WARM_S (15), ODBENCH_COLD (50), ODBENCH_POLL_MS (100), ODBENCH_TAG (file name suffix),
 * ODBENCH_TRACE (print every cold-start GET). ODBENCH_ROUNDS=0: cold starts only.
 * Run: `node bench/process/ondemand.ts`. Writes bench/results/ondemand-<date>[-tag].md.
 */

const env = process.env;
const PROCS = Number(env.ODBENCH_PROCS ?? 100);
const WATCHED = Number(env.ODBENCH_WATCHED ?? 5);
const ROUNDS = Number(env.ODBENCH_ROUNDS ?? 2);
const WINDOW_S = Number(env.ODBENCH_WINDOW_S ?? 60);
const WARM_S = Number(env.ODBENCH_WARM_S ?? 15);
const COLD = Number(env.ODBENCH_COLD ?? 50);
const POLL_MS = Number(env.ODBENCH_POLL_MS ?? 100);
const TAG = env.ODBENCH_TAG ? `-${env.ODBENCH_TAG}` : '';
const WAITING = '## on demand: waiting';
const TICK_MS = 1000;

type Mode = 'ondemand' | 'always';

interface Ctx { base: string; service: ChildProcess; pid: number; dir: string }

interface Round {
  mode: Mode; n: number; cpu: number; rssStart: number; rssMean: number; rssMax: number;
  kidsMean: number; kidsMax: number; kidsCpu: number; watchedReal: number; created: number;
}

/** The looping source: testsrc2 160x120 10 fps, H.264 ultrafast, a keyframe every second, 20 s. */
function makeSource(file: string): void {
  const r = spawnSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10:duration=20',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '10', '-keyint_min', '10', '-sc_threshold', '0', '-pix_fmt', 'yuv420p',
    '-b:v', '60k', '-movflags', '+faststart', file]);
  if (r.status !== 0) throw new Error(`source: ${r.stderr.toString()}`);
}

/** Process `p<i>`'s config: the source remuxed to HLS in memfs; on demand or always on. */
function config(i: number, mode: Mode, idleSeconds: number): Record<string, unknown> {
  const name = `p${i}`;
  return {
    id: name, reconnect: true, reconnect_delay_seconds: 2, stale_timeout_seconds: 30, autostart: true,
    options: ['-loglevel', 'info'],
    input: [{ id: 'in', address: '{diskfs}/src.mp4', options: ['-re', '-stream_loop', '-1'] }],
    output: [{
      id: 'out', address: `{memfs}/${name}.m3u8`,
      options: ['-c', 'copy', '-f', 'hls', '-hls_time', '1', '-hls_list_size', '4', '-hls_flags', 'delete_segments',
        '-method', 'PUT', '-hls_segment_filename', `{memfs}/${name}_%d.ts`],
    }],
    ...(mode === 'ondemand' ? { ondemand: { enable: true, idle_seconds: idleSeconds } } : {}),
  };
}

async function startService(root: string, tag: string): Promise<Ctx> {
  const dir = join(root, tag);
  await mkdir(join(dir, 'disk'), { recursive: true });
  makeSource(join(dir, 'disk', 'src.mp4'));
  const script = fileURLToPath(new URL('./ondemand-service.ts', import.meta.url));
  const service = fork(script, [dir], { execArgv: loaderArgs() });
  const base = await new Promise<string>((resolve, reject) => {
    service.once('message', (m) => resolve((m as { url: string }).url));
    service.once('exit', (code) => reject(new Error(`service exited (${code})`)));
  });
  return { base, service, pid: service.pid!, dir };
}

/** The pids of ffmpeg processes whose command line names `marker` (the round's directory). */
function ffmpegPids(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if ((cmd.startsWith('ffmpeg') || cmd.includes('/ffmpeg\0')) && cmd.includes(marker)) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Closes the service, then kills any ffmpeg of its directory that is left (there should be none). */
async function stopService(ctx: Ctx): Promise<number> {
  const exited = new Promise<void>((resolve) => ctx.service.once('exit', () => resolve()));
  ctx.service.send('stop');
  await Promise.race([exited, sleep(30_000)]);
  if (ctx.service.exitCode === null) ctx.service.kill('SIGKILL');
  await sleep(500);
  const left = ffmpegPids(ctx.dir);
  for (const pid of left) process.kill(pid, 'SIGKILL');
  await rm(ctx.dir, { recursive: true, force: true });
  return left.length;
}

/** Adds PROCS processes; the number the API accepted. */
async function createAll(ctx: Ctx, mode: Mode, idleSeconds: number): Promise<number> {
  let ok = 0;
  for (let i = 0; i < PROCS; i++) {
    await api(ctx.base, 'POST', '/api/v3/process', config(i, mode, idleSeconds));
    ok++;
  }
  return ok;
}

/** The answer to one GET of a playlist: ffmpeg's own, the waiting one, or something else. */
async function getPlaylist(url: string): Promise<'real' | 'waiting' | 'other'> {
  try {
    const r = await fetch(url);
    const text = await r.text();
    if (r.status !== 200) return 'other';
    if (text.includes(WAITING)) return 'waiting';
    return text.includes('#EXTINF') ? 'real' : 'other';
  } catch {
    return 'other';
  }
}

/** Players: GET each watched playlist every second until stopped; the last answer of each. */
function watch(ctx: Ctx): { stop: () => Promise<string[]> } {
  let on = true;
  const last: string[] = Array.from({ length: WATCHED }, () => 'none');
  const loops = last.map(async (_, i) => {
    while (on) {
      const t0 = Date.now();
      last[i] = await getPlaylist(`${ctx.base}/memfs/p${i}.m3u8`);
      await sleep(Math.max(0, TICK_MS - (Date.now() - t0)));
    }
  });
  return { stop: async () => { on = false; await Promise.all(loops); return last; } };
}

const kidsCpu = (pids: number[]): Map<number, number> => {
  const m = new Map<number, number>();
  for (const pid of pids) {
    try { m.set(pid, cpuSeconds(pid)); } catch { /* gone */ }
  }
  return m;
};

/** One round: a fresh service, PROCS processes in `mode`, WATCHED polled, the window measured. */
async function round(root: string, mode: Mode, n: number): Promise<Round> {
  const ctx = await startService(root, `${mode}-${n}`);
  try {
    const created = await createAll(ctx, mode, 10);
    const players = watch(ctx);
    await sleep(WARM_S * 1000);
    const rss: number[] = [];
    const kids: number[] = [];
    const cpu0 = cpuSeconds(ctx.pid);
    const rssStart = rssMb(ctx.pid);
    const k0 = kidsCpu(ffmpegPids(ctx.dir));
    const t0 = performance.now();
    for (let s = 0; s < WINDOW_S; s++) {
      await sleep(TICK_MS);
      rss.push(rssMb(ctx.pid));
      kids.push(ffmpegPids(ctx.dir).length);
    }
    const secs = (performance.now() - t0) / 1000;
    const cpu = (cpuSeconds(ctx.pid) - cpu0) / secs * 100;
    const k1 = kidsCpu(ffmpegPids(ctx.dir));
    let kidSecs = 0;
    for (const [pid, c] of k1) kidSecs += c - (k0.get(pid) ?? c);
    const last = await players.stop();
    return {
      mode, n, cpu, rssStart, rssMean: mean(rss), rssMax: Math.max(...rss), kidsMean: mean(kids), kidsMax: Math.max(...kids),
      kidsCpu: kidSecs / secs * 100, watchedReal: last.filter((x) => x === 'real').length, created,
    };
  } finally {
    const left = await stopService(ctx);
    if (left) console.error(`round ${mode} ${n}: ${left} ffmpeg left after the service closed (killed)`);
  }
}

interface ProcState { exec: string; ondemand?: { waiting: boolean } }

/** Waits until process `id` waits for a reader (its ffmpeg ended), up to `ms`. */
async function waitWaiting(ctx: Ctx, id: string, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const s = await api<ProcState>(ctx.base, 'GET', `/api/v3/process/${id}/state`);
    if (s.ondemand?.waiting === true && s.exec === 'finished') return true;
    await sleep(200);
  }
  return false;
}

/** One cold start of `p<i>`: ms from the first GET until ffmpeg's playlist is answered; whether the waiting one was seen. */
async function coldStart(ctx: Ctx, i: number): Promise<{ ms: number; waitingSeen: boolean }> {
  const url = `${ctx.base}/memfs/p${i}.m3u8`;
  const t0 = performance.now();
  let waitingSeen = false;
  for (;;) {
    const t = performance.now();
    const got = await getPlaylist(url);
    if (env.ODBENCH_TRACE) console.log(`p${i} GET at ${Math.round(t - t0)} ms took ${Math.round(performance.now() - t)} ms: ${got}`);
    if (got === 'real') return { ms: performance.now() - t0, waitingSeen };
    if (got === 'waiting') waitingSeen = true;
    if (performance.now() - t0 > 30_000) throw new Error(`p${i}: no real playlist within 30 s`);
    await sleep(Math.max(0, POLL_MS - (performance.now() - t)));
  }
}

/** COLD cold starts, one at a time, each of a different waiting process. */
async function coldStarts(root: string): Promise<{ times: number[]; waitingSeen: number; notWaiting: number; kidsMax: number }> {
  const ctx = await startService(root, 'cold');
  try {
    await createAll(ctx, 'ondemand', 2);
    const times: number[] = [];
    let waitingSeen = 0;
    let notWaiting = 0;
    let kidsMax = 0;
    for (let c = 0; c < Math.min(COLD, PROCS); c++) {
      if (!await waitWaiting(ctx, `p${c}`, 15_000)) notWaiting++;
      // the waiting playlist is written when the process starts waiting: wait for it too
      const end = Date.now() + 10_000;
      while (Date.now() < end && (await fetch(`${ctx.base}/api/v3/fs/mem/p${c}.m3u8`).then((r) => r.text()).catch(() => '')).indexOf(WAITING) < 0) await sleep(100);
      const r = await coldStart(ctx, c);
      times.push(r.ms);
      if (r.waitingSeen) waitingSeen++;
      kidsMax = Math.max(kidsMax, ffmpegPids(ctx.dir).length);
    }
    return { times, waitingSeen, notWaiting, kidsMax };
  } finally {
    await stopService(ctx);
  }
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil(p / 100 * s.length) - 1)]! : 0;
};
const f1 = (x: number) => x.toFixed(1);

function report(rounds: Round[], cold: Awaited<ReturnType<typeof coldStarts>>, before: string, after: string, started: string): string {
  const rows = rounds.map((r) => `| ${r.mode} | ${r.n} | ${r.created} | ${f1(r.cpu)} | ${f1(r.rssStart)} | ${f1(r.rssMean)} | ${f1(r.rssMax)} | ${f1(r.kidsMean)} | ${r.kidsMax} | ${f1(r.kidsCpu)} | ${r.watchedReal}/${WATCHED} |`);
  const summary = (['ondemand', 'always'] as Mode[]).map((m) => {
    const rs = rounds.filter((r) => r.mode === m);
    return `| ${m} | ${rs.length} | ${f1(mean(rs.map((r) => r.cpu)))} | ${f1(mean(rs.map((r) => r.rssMean)))} | ${f1(Math.max(...rs.map((r) => r.rssMax)))} | ${f1(mean(rs.map((r) => r.kidsMean)))} | ${f1(mean(rs.map((r) => r.kidsCpu)))} |`;
  });
  const t = cold.times;
  return [
    `# On-demand processes: ${PROCS} defined, ${WATCHED} watched, against ${PROCS} always on (${started})`, '',
    `Command: \`node bench/process/ondemand.ts\` (ODBENCH_PROCS=${PROCS} WATCHED=${WATCHED} ROUNDS=${ROUNDS} WINDOW_S=${WINDOW_S} WARM_S=${WARM_S} COLD=${COLD} POLL_MS=${POLL_MS}).`,
    `Node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}). Each process: \`-re -stream_loop -1 -i src.mp4 -c copy\`,`,
    'src.mp4 testsrc2 160x120 10 fps H.264 (~60 kbit/s, a keyframe a second), HLS to memfs (`-hls_time 1 -hls_list_size 4`).',
    `The service fresh for every round, ${WARM_S} s warm-up, then a ${WINDOW_S} s window; ${WATCHED} playlists polled every second from the warm-up on in both modes.`,
    'Service CPU = utime + stime of the service process (its ffmpeg children excluded) over the window, % of one core.',
    '', `Load before: \`${before}\``, `Load after: \`${after}\``, '',
    ...(rounds.length ? [
      '## Rounds', '',
      '| mode | # | created | service CPU % | RSS start MiB | RSS mean MiB | RSS max MiB | ffmpeg children mean | max | ffmpeg CPU % (all) | watched real |',
      '|---|---|---|---|---|---|---|---|---|---|---|', ...rows, '',
      '## Per mode (mean of rounds)', '',
      '| mode | rounds | service CPU % | RSS mean MiB | RSS max MiB | ffmpeg children | ffmpeg CPU % |', '|---|---|---|---|---|---|---|', ...summary, '',
    ] : []),
    `## Cold starts (${t.length}, one at a time, each a different waiting process, polled every ${POLL_MS} ms)`, '',
    'Time from the first GET of the playlist until the answer is ffmpeg\'s own playlist (not the waiting one).', '',
    '| p50 ms | p95 ms | min ms | max ms | mean ms | waiting playlist seen first | not waiting before | ffmpeg children max |',
    '|---|---|---|---|---|---|---|---|',
    `| ${Math.round(pct(t, 50))} | ${Math.round(pct(t, 95))} | ${Math.round(Math.min(...t))} | ${Math.round(Math.max(...t))} | ${Math.round(mean(t))} | ${cold.waitingSeen}/${t.length} | ${cold.notWaiting} | ${cold.kidsMax} |`,
    '', `All times (ms): ${t.map((x) => Math.round(x)).join(', ')}`, '',
  ].join('\n');
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'odbench-'));
  const started = new Date().toISOString();
  const before = uptime();
  const rounds: Round[] = [];
  try {
    for (let n = 1; n <= ROUNDS; n++) {
      for (const mode of ['ondemand', 'always'] as Mode[]) {
        const r = await round(root, mode, n);
        console.log(JSON.stringify(r));
        rounds.push(r);
      }
    }
    const cold = await coldStarts(root);
    console.log(JSON.stringify(cold));
    const after = uptime();
    const md = report(rounds, cold, before, after, started);
    const file = fileURLToPath(new URL(`../results/ondemand-${started.slice(0, 10)}${TAG}.md`, import.meta.url));
    await writeFile(file, md);
    console.log(md);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('ondemand.ts')) await main();
