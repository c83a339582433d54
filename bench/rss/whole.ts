import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fork, spawn } from 'node:child_process';
import { buildCheckout, startDeployed } from '../process/deployed.ts';
import { freePort } from '../llhls/common.ts';

/**
 * The whole service idle (issue 46.2): started as `npm start` runs it (`deployed.ts`) with every
 * plugin on (RTMP, SRT, WebRTC, sessions, metrics, playout, recordings, memfs with credentials,
 * auth), no process and no client. After `--settle` seconds, over `--window` seconds: RSS and Pss
 * (RSS without the pages shared with other processes, e.g. the runtime's binary, from
 * /proc/<pid>/smaps_rollup), CPU (the time on a CPU of all its threads, from /proc/<pid>/task/<t>/schedstat, in
 * nanoseconds where utime + stime count 10 ms ticks) and wake-ups (voluntary context switches) of the main process and of every process under
 * it (its helper hosts: the SRT host, the WebRTC host; ffmpeg runs none here).
 * With `--srt-subscribers N`, then: one SRT publisher, N SRT subscribers for `--hold` seconds, and the
 * helpers' memory while they watch and 5, 15 and 30 s after they left (the publisher stays): what a
 * host gives back (issue 46.2).
 * `--metrics-off`: the same with `metrics.enable` off (the history's sampling is most of an idle main's CPU).
 * Run: `node bench/rss/whole.ts [--settle 10] [--window 30] [--metrics-off] [--srt-subscribers 50] [--hold 20] [--write [tag]]`;
 * writes bench/results/whole-idle-<date>[-tag].md.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const args = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] && !args[i + 1]!.startsWith('--') ? args[i + 1]! : def;
};
const SETTLE_S = Number(opt('settle', '10'));
const WINDOW_S = Number(opt('window', '30'));
const SUBSCRIBERS = Number(opt('srt-subscribers', '0'));
const HOLD_S = Number(opt('hold', '20'));
const WRITE = args.includes('--write');
// what the metrics' sampling costs an idle service: the same with `metrics.enable` off
const METRICS_OFF = args.includes('--metrics-off');
const TAG = WRITE && opt('write', '') ? `-${opt('write', '')}` : '';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Proc { pid: number; name: string; rssMb: number; pssMb: number; ussMb: number; cpuS: number; wakes: number }

/** CPU seconds and voluntary context switches of all the threads of `pid`. */
function threads(pid: number): { cpuS: number; wakes: number } {
  let ns = 0;
  let wakes = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
      wakes += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/task/${task}/status`, 'utf8'))?.[1] ?? 0);
    } catch { /* the thread ended */ }
  }
  return { cpuS: ns / 1e9, wakes };
}

function children(pid: number): number[] {
  const out: number[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const list = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    for (const c of list ? list.split(' ') : []) out.push(Number(c));
  }
  return out;
}

function tree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    try { out.push(...children(out[i]!)); } catch { /* gone */ }
  }
  return out;
}

function read(pid: number): Proc | undefined {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const roll = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(roll)?.[1] ?? NaN);
    const script = cmd.find((a) => /\.(js|ts)$/.test(a));
    const name = script ? script.replace(ROOT, '') : (cmd[0] ?? '?').split('/').pop()!;
    return { pid, name, rssMb: kb('Rss') / 1024, pssMb: kb('Pss') / 1024, ussMb: (kb('Private_Clean') + kb('Private_Dirty')) / 1024, ...threads(pid) };
  } catch {
    return undefined;
  }
}

const snapshot = (root: number) => tree(root).map(read).filter((p): p is Proc => p !== undefined);
const uptime = () => spawnSync('uptime', { encoding: 'utf8' }).stdout.trim();
const head = () => spawnSync('git', ['-C', ROOT, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).stdout.trim().slice(0, 100);

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-whole-'));
  const srtPort = await freePort();
  const svc = await startDeployed(ROOT, buildCheckout(ROOT), dir, {
    api: { auth: { enable: true, username: 'admin', password: 'secret', jwt: { secret: 'bench-jwt-secret-0123456789abcdef' } } },
    storage: { memory: { auth: { enable: true, username: 'mem', password: 'memsecret' } } },
    rtmp: { enable: true, address: '127.0.0.1:0' }, srt: { enable: true, address: `127.0.0.1:${srtPort}` },
    webrtc: { enable: true, bind_address: '127.0.0.1' }, sessions: { enable: true }, metrics: { enable: !METRICS_OFF, enable_prometheus: true },
    playout: { enable: true, min_port: 41000, max_port: 41020 }, recordings: { enable: true }, log: { level: 'warn' },
  });
  const load0 = uptime();
  try {
    await sleep(SETTLE_S * 1000);
    const a = snapshot(svc.pid);
    const t0 = Date.now();
    await sleep(WINDOW_S * 1000);
    const b = snapshot(svc.pid);
    const secs = (Date.now() - t0) / 1000;
    const rows = b.map((p) => {
      const before = a.find((x) => x.pid === p.pid);
      return { ...p, cpu: before ? (p.cpuS - before.cpuS) / secs * 100 : NaN, wakesPerS: before ? (p.wakes - before.wakes) / secs : NaN };
    });
    const sum = (k: 'rssMb' | 'pssMb' | 'ussMb' | 'cpu' | 'wakesPerS') => rows.reduce((s, r) => s + r[k], 0);
    const lines = [
      `# The whole service idle, every plugin on (issue 46.2), ${new Date().toISOString()}`, '',
      `${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), Node ${process.version}. Commit: ${head()}.`,
      `uptime before: \`${load0}\`; after: \`${uptime()}\`.`,
      `Started as \`npm start\` runs it; RTMP, SRT, WebRTC, sessions, ${METRICS_OFF ? '' : 'metrics, '}playout, recordings, memfs with credentials, API auth on${METRICS_OFF ? ' (metrics off)' : ''};`,
      `no process, no client. Figures ${SETTLE_S} s after the banner; CPU over the next ${WINDOW_S} s.`, '',
      'RSS counts every page a process maps, also those it shares with others (the runtime\'s binary, read once for main and the',
      'SRT host): their sum counts shared pages twice. Pss divides each shared page among its sharers (the sum counts every page',
      'once); USS is a process\'s private pages only (what its end gives back).', '',
      '| process | pid | RSS (MB) | Pss (MB) | USS (MB) | CPU (% of a core) | wake-ups/s |', '|---|---:|---:|---:|---:|---:|---:|',
      ...rows.map((r, i) => `| ${i === 0 ? 'main' : 'helper'}: ${r.name} | ${r.pid} | ${r.rssMb.toFixed(1)} | ${r.pssMb.toFixed(1)} | ${r.ussMb.toFixed(1)} | ${r.cpu.toFixed(3)} | ${r.wakesPerS.toFixed(1)} |`),
      `| **all** | | **${sum('rssMb').toFixed(1)}** | **${sum('pssMb').toFixed(1)}** | **${sum('ussMb').toFixed(1)}** | **${sum('cpu').toFixed(3)}** | **${sum('wakesPerS').toFixed(1)}** |`, '',
      'Aim (issue 46.2): under 120 MB for the whole service, each helper under 15 MB, idle CPU 0.0 %.', '',
      ...(SUBSCRIBERS > 0 ? await subscribers(svc.pid, srtPort, dir) : []),
    ];
    const md = lines.join('\n');
    console.log(md);
    if (WRITE) {
      const file = join(ROOT, 'bench/results', `whole-idle-${new Date().toISOString().slice(0, 10)}${TAG}.md`);
      await writeFile(file, md);
      console.log(`wrote ${file}`);
    }
  } finally {
    await svc.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The helpers' memory through a publisher, N subscribers for HOLD_S, and 5, 15 and 30 s after they left. */
async function subscribers(root: number, port: number, dir: string): Promise<string[]> {
  const clip = join(dir, 'clip.ts');
  const enc = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25', '-t', '10',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-b:v', '2500k', '-g', '25', '-pix_fmt', 'yuv420p', '-f', 'mpegts', clip]);
  if (enc.status !== 0) throw new Error(`clip: ${enc.stderr}`);
  const pub = spawn('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-re', '-stream_loop', '-1', '-i', clip, '-c', 'copy', '-f', 'mpegts',
    `srt://127.0.0.1:${port}?mode=caller&transtype=live&latency=120000&streamid=bench,mode:publish`], { stdio: 'ignore' });
  const rows: string[] = [];
  const row = (label: string) => {
    for (const p of snapshot(root).slice(1).filter((x) => x.name.includes('/host/') || x.name === 'srt-host')) rows.push(`| ${label} | ${p.name} | ${p.rssMb.toFixed(1)} | ${p.pssMb.toFixed(1)} | ${p.ussMb.toFixed(1)} |`);
  };
  try {
    await sleep(5000);
    row('publisher only');
    const subs = fork(fileURLToPath(new URL('../srt/subscribers.ts', import.meta.url)), [String(port), 'bench', String(SUBSCRIBERS)]);
    await new Promise((r) => subs.once('message', r));
    await sleep(HOLD_S * 1000);
    row(`${SUBSCRIBERS} subscribers`);
    subs.send('stop');
    await new Promise((r) => subs.once('exit', r));
    const left = Date.now();
    for (const s of [5, 15, 30]) {
      await sleep(left + s * 1000 - Date.now());
      row(`${s} s after they left`);
    }
  } finally {
    pub.kill('SIGKILL');
  }
  return [
    `Then one SRT publisher (2.5 Mbit/s) and ${SUBSCRIBERS} SRT subscribers (bench/srt/subscribers.ts) for ${HOLD_S} s; the helpers:`, '',
    '| when | helper | RSS (MB) | Pss (MB) | USS (MB) |', '|---|---|---:|---:|---:|', ...rows, '',
  ];
}

await main();
