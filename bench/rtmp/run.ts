import { fork, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RawPlayer } from './raw-player.ts';

/*
 * RTMP benchmark (issue 12 point 9): one publisher at about 2.5 Mbit/s, then 10, 100 and 500 raw
 * players; the service's CPU (utime+stime of its process) per player and its RSS; glass-to-glass
 * delay of one ffmpeg player (publisher's showinfo before encode to the player's after decode,
 * frames matched by timestamp). Writes bench/results/rtmp-<date>.md.
 *
 *   node bench/rtmp/run.ts [seconds per step, default 15]
 */
const WINDOW = Number(process.argv[2] ?? 15) * 1000;
const SERVER = fileURLToPath(new URL('./server.ts', import.meta.url));
const RESULTS = fileURLToPath(new URL('../results/', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function cpuTicks(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(f[11]) + Number(f[12]);
}
function rssMb(pid: number): number {
  return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

/** Times (ms since epoch) at which each `pts_time` showed in an ffmpeg's showinfo output. */
function showinfoTimes(child: ChildProcess): Map<string, number> {
  const seen = new Map<string, number>();
  let partial = '';
  child.stderr!.on('data', (d: Buffer) => {
    const now = Date.now();
    const lines = (partial + d.toString()).split(/[\r\n]/);
    partial = lines.pop()!;
    for (const l of lines) {
      const m = /Parsed_showinfo.*? pts_time:([\d.]+)/.exec(l);
      const key = m ? Number(m[1]).toFixed(3) : undefined;
      if (key && !seen.has(key)) seen.set(key, now);
    }
  });
  return seen;
}

const dir = await mkdtemp(join(tmpdir(), 'bench-rtmp-'));
const server = fork(SERVER, [dir], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
const { rtmpPort } = await new Promise<{ url: string; rtmpPort: number }>((r) => server.once('message', (m) => r(m as never)));
const pid = server.pid!;
const url = `rtmp://127.0.0.1:${rtmpPort}/live/bench`;
const publisher = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'info', '-re',
  '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=30', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
  '-vf', 'showinfo', '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-b:v', '2300k', '-maxrate', '2300k',
  '-bufsize', '1200k', '-g', '60', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '128k', '-f', 'flv', url], { stdio: ['ignore', 'ignore', 'pipe'] });
const sent = showinfoTimes(publisher);
await sleep(3000);

async function measure(): Promise<{ cpu: number; rss: number }> {
  const c0 = cpuTicks(pid);
  const t0 = Date.now();
  await sleep(WINDOW);
  return { cpu: ((cpuTicks(pid) - c0) / 100) / ((Date.now() - t0) / 1000) * 100, rss: rssMb(pid) };
}

// glass to glass, with the publisher alone
const glass = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'info', '-copyts', '-i', url, '-vf', 'showinfo', '-an', '-f', 'null', '-'], { stdio: ['ignore', 'ignore', 'pipe'] });
const got = showinfoTimes(glass);
const base = await measure();
glass.kill('SIGKILL');
// the publisher's muxer shifts every timestamp by the AAC priming (about 23 ms, under one frame
// of 33 ms): the player's frame at q is the publisher's frame at floor(q * 30) / 30
const source = (q: string) => (Math.floor(Number(q) * 30 + 1e-6) / 30).toFixed(3);
const delays = [...got].filter(([q]) => sent.has(source(q))).map(([q, at]) => at - sent.get(source(q))!).sort((a, b) => a - b);
const half = delays.slice(Math.floor(delays.length / 2));
const pct = (a: number[], p: number) => a[Math.min(a.length - 1, Math.floor(a.length * p))] ?? NaN;

const rows: string[] = [];
for (const n of [10, 100, 500]) {
  const players = Array.from({ length: n }, () => new RawPlayer(rtmpPort, 'live', 'bench'));
  await sleep(3000);
  const b0 = players.map((p) => p.bytes);
  const m = await measure();
  const got = players.map((p, i) => p.bytes - b0[i]!).sort((a, b) => a - b);
  const median = got[Math.floor(n / 2)]!;
  const behind = players.filter((p, i) => p.closed || p.bytes - b0[i]! < median * 0.9).length;
  const perPlayer = (m.cpu - base.cpu) / n;
  rows.push(`| ${n} | ${m.cpu.toFixed(1)} % | ${perPlayer.toFixed(3)} % | ${m.rss.toFixed(0)} MB | ${((median * 8) / WINDOW / 1000).toFixed(2)} Mbit/s | ${behind} |`);
  console.log(rows.at(-1));
  for (const p of players) p.close();
  await sleep(1000);
}
publisher.kill('SIGKILL');
server.send('stop');
await new Promise((r) => server.once('exit', r));
await rm(dir, { recursive: true, force: true });

const date = new Date().toISOString().slice(0, 10);
const md = `# RTMP benchmark ${date}

One publisher (ffmpeg, testsrc2 640x360 30 fps, x264 ultrafast zerolatency 2.3 Mbit/s + AAC 128 kbit/s),
N raw RTMP players in one Node process (handshake, connect, createStream, play; bytes counted only),
the service in its own process (\`bench/rtmp/server.ts\`). CPU = utime+stime of the service process
over ${WINDOW / 1000} s, % of one core. A player "behind" received under 90 % of the median bytes or was
dropped. Machine: 2 cores shared with other work, so figures are approximate.

Publisher only: ${base.cpu.toFixed(1)} % CPU, ${base.rss.toFixed(0)} MB RSS.

| players | service CPU | CPU per player (minus publisher only) | RSS | median player rate | behind |
|---|---|---|---|---|---|
${rows.join('\n')}

Glass to glass (publisher's showinfo before encode to one ffmpeg player's showinfo after decode,
second half of ${delays.length} matched frames, publisher alone; frames matched by timestamp, see run.ts): p50 ${pct(half, 0.5)} ms, p90 ${pct(half, 0.9)} ms.

Aim: 500 players under 25 % of one core, no player behind.
`;
await mkdir(RESULTS, { recursive: true });
await writeFile(join(RESULTS, `rtmp-${date}.md`), md);
console.log(md);
