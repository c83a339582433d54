import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { Relay } from '../../plugins/playout/relay/index.ts';

/**
 * CPU cost of the playout relay (issue 15, point 5): N relays in this process, each fed by a pusher
 * (a pre-encoded 640x360 25 fps h264+aac clip sent with `-re -stream_loop -1 -c copy`, so the pushers
 * cost next to nothing) and read by an ffmpeg consumer (`-c copy -f null`). Measured per relay:
 * this Node process's CPU (process.cpuUsage) in pass-through and while every relay loops its error
 * frame (pushers killed), and the relays' source ffmpegs' CPU from /proc/<pid>/stat.
 * Run: `node bench/playout/relay.ts [relays, default 10] [seconds per phase, default 20]`.
 * Writes bench/results/playout-<date>.{json,md}. Aim: under 2 % of one core per relay in pass-through.
 */

const N = Number(process.argv[2] ?? 10);
const SECONDS = Number(process.argv[3] ?? 20);
const log = pino({ level: 'warn' });
const TICK = 100; // USER_HZ: /proc times are in 1/100 s on Linux

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function procCpuSeconds(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const parts = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(parts[11]) + Number(parts[12])) / TICK;
  } catch {
    return 0;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(fn: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await sleep(200);
  }
}

/** CPU of this process and of the relays' children over `seconds`, in % of one core per relay. */
async function measure(relays: Relay[], seconds: number): Promise<{ relay: number; children: number }> {
  const pids = relays.flatMap((r) => r.pids());
  const c0 = pids.map(procCpuSeconds);
  const u0 = process.cpuUsage();
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const u = process.cpuUsage(u0);
  const wall = (performance.now() - t0) / 1000;
  const child = pids.map(procCpuSeconds).reduce((a, b, i) => a + Math.max(0, b - c0[i]!), 0);
  return { relay: ((u.user + u.system) / 1e6 / wall / relays.length) * 100, children: (child / wall / relays.length) * 100 };
}

const dir = mkdtempSync(join(tmpdir(), 'relay-bench-'));
const children: ChildProcess[] = [];
const relays: Relay[] = [];
try {
  const media = join(dir, 'media.ts');
  spawnSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25', '-f', 'lavfi', '-i', 'sine=r=48000',
    '-t', '10', '-c:v', 'libx264', '-preset', 'veryfast', '-b:v', '1000k', '-g', '50', '-c:a', 'aac', '-ac', '2', '-f', 'mpegts', media]);
  const pushers: ChildProcess[] = [];
  let pushing = true;
  for (let i = 0; i < N; i++) {
    const src = await freePort();
    const url = `tcp://127.0.0.1:${src}?listen=1`;
    const relay = new Relay({ id: `playout:${url}`, url, inputOptions: [], port: await freePort(), ffmpeg: { binary: 'ffmpeg', spawn: (f, a, o = {}) => spawn(f, a, { stdio: o.stdio ?? ['ignore', 'ignore', 'pipe'], env: o.env ?? {} }) }, label: `bench${i}`, log });
    await relay.start();
    relays.push(relay);
    const port = (relay.status().debug as { port: number }).port;
    children.push(spawn('ffmpeg', ['-v', 'error', '-f', 'mpegts', '-i', `tcp://127.0.0.1:${port}`, '-c', 'copy', '-f', 'null', '-'], { stdio: 'ignore' }));
    // a pusher refused because the source ffmpeg does not listen yet is started again
    const push = (): void => {
      if (!pushing) return;
      const p = spawn('ffmpeg', ['-v', 'error', '-re', '-stream_loop', '-1', '-i', media, '-c', 'copy', '-f', 'mpegts', `tcp://127.0.0.1:${src}`], { stdio: 'ignore' });
      pushers.push(p);
      children.push(p);
      p.once('close', () => setTimeout(push, 300));
    };
    push();
  }
  await until(() => relays.every((r) => r.status().input.state === 'running' && r.status().output.state === 'running'), 'all relays in pass-through');
  await sleep(3000);
  const pass = await measure(relays, SECONDS);
  pushing = false;
  for (const p of pushers) p.kill('SIGKILL');
  await until(() => relays.every((r) => r.status().looping), 'all relays looping');
  await sleep(3000);
  const loop = await measure(relays, SECONDS);
  const drops = relays.reduce((a, r) => a + r.status().drop, 0);

  const date = new Date().toISOString().slice(0, 10);
  const result = { date, relays: N, seconds: SECONDS, cpus: cpus().length, loadavg: loadavg(), passThrough: pass, looping: loop, drops };
  const out = fileURLToPath(new URL('../results/', import.meta.url));
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, `playout-${date}.json`), JSON.stringify(result, null, 2) + '\n');
  const f = (x: number) => x.toFixed(2);
  writeFileSync(join(out, `playout-${date}.md`), [
    `# Playout relay CPU, ${date}`, '',
    `${N} relays, ${SECONDS} s per phase, ${cpus().length} CPUs, load average at the end ${loadavg().map((x) => x.toFixed(2)).join(' ')}.`,
    'Source: 640x360 25 fps h264 1 Mbit/s + aac stereo; consumers: `ffmpeg -c copy -f null`. Figures in % of one core per relay.', '',
    '| phase | relay (Node, this process) | source ffmpeg (child) |', '|---|---|---|',
    `| pass-through | ${f(pass.relay)} % | ${f(pass.children)} % |`,
    `| error frame looping | ${f(loop.relay)} % | ${f(loop.children)} % |`, '',
    `Packets dropped for slow consumers: ${drops}. Aim: relay under 2 % of one core per relay in pass-through.`,
    'Run: `node bench/playout/relay.ts [relays] [seconds]`.', '',
  ].join('\n'));
  console.log(JSON.stringify(result, null, 2));
} finally {
  await Promise.all(relays.map((r) => r.stop()));
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
