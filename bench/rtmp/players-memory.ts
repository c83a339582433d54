import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RawPlayer } from './raw-player.ts';

/*
 * Memory of the service with many RTMP players (issue 29 point 3). The real service
 * (`server.ts`, its own process, http.threads 0) gets one ffmpeg publisher (testsrc2 + sine,
 * h264/aac, about 1.6 Mbit/s, -re) and N raw players (`raw-player.ts`); the service's VmRSS is
 * sampled: idle, publisher only, during the load, and 0/10/30 s after every player left (the
 * publisher goes on). With each RSS figure the service's own `process.memoryUsage()` (heap,
 * external, arrayBuffers), to tell the JS heap from buffers from what malloc keeps.
 *
 *   node bench/rtmp/players-memory.ts <label> [players=500] [VAR=value ...]
 *
 *   node bench/rtmp/players-memory.ts after-stall50 --stall=50 --rate=2300
 *
 * `label` names the results file (bench/results/rtmp-players-memory-<date>-<label>.md);
 * `VAR=value` arguments go into the service's environment (e.g. MALLOC_ARENA_MAX=2, or
 * NODE_OPTIONS=--max-semi-space-size=8); `--gc` starts the service with --expose-gc and collects
 * before each memoryUsage; `--stall=S` has every player stop reading for the first S s of the
 * load (slow players: the service's output backs up once the kernel's socket buffers, several MB
 * each on loopback, are full); `--rate=K` sets the publisher's video bitrate (kbit/s). About 75 s,
 * with `--stall=50` about 2 minutes. Each sample also splits the resident memory by mapping kind
 * (glibc's main arena, its other arenas, other anonymous, files) and reports V8's heap spaces.
 */
const args = process.argv.slice(2);
const label = args[0] ?? 'run';
const PLAYERS = Number(args.find((a) => /^\d+$/.test(a)) ?? 500);
const extraEnv = Object.fromEntries(args.filter((a) => /^[A-Z_]+=/.test(a)).map((a) => [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]));
const withGc = args.includes('--gc');
/** `--stall=S`: every player stops reading for the first S s of the load, then reads again (slow players). */
const stall = Number(/^--stall=(\d+)$/.exec(args.find((a) => a.startsWith('--stall=')) ?? '')?.[1] ?? 0);
/** `--rate=K`: the publisher's video bitrate in kbit/s (default 1500). */
const RATE = Number(/^--rate=(\d+)$/.exec(args.find((a) => a.startsWith('--rate=')) ?? '')?.[1] ?? 1500);
const SAMPLES = Math.max(10, Math.ceil(stall / 2) + 5);
const SERVER = fileURLToPath(new URL('./server.ts', import.meta.url));
const RESULTS = fileURLToPath(new URL('../results/', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Mem { rss: number; heapUsed: number; heapTotal: number; external: number; arrayBuffers: number }
interface Sample { at: string; vmRss: number; mem: Mem; players: number; spaces: Record<string, number>; kinds: Kinds }

/** utime + stime of a process, in clock ticks (1/100 s). */
function cpuTicks(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(f[11]) + Number(f[12]);
}

function vmRssMb(pid: number): number {
  return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

const mb = (n: number) => (n / 1048576).toFixed(0);

/**
 * The service's resident memory by mapping kind (MB, from /proc/PID/smaps): `brk` = glibc's main
 * arena ([heap]); `arenas` = glibc's other arenas (a 64 MiB-aligned read-write mapping whose
 * reserved rest makes exactly 64 MiB: malloc from threads other than the main one); `anon` = every
 * other anonymous mapping (V8's pages, large malloc blocks, stacks); `file` = code and other files.
 */
function residentKinds(smaps: string): Kinds {
  const out: Kinds = { brk: 0, arenas: 0, anon: 0, file: 0 };
  const maps: Array<{ start: bigint; end: bigint; perm: string; name: string; rss: number }> = [];
  for (const line of smaps.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) maps.push({ start: BigInt(`0x${head[1]}`), end: BigInt(`0x${head[2]}`), perm: head[3]!, name: head[4]!, rss: 0 });
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && maps.length) maps.at(-1)!.rss = Number(rss[1]) / 1024;
  }
  const ARENA = 64n * 1024n * 1024n;
  maps.forEach((m, i) => {
    const next = maps[i + 1];
    const arena = m.name === '' && m.start % ARENA === 0n && m.perm === 'rw-p' && (m.end - m.start === ARENA || (next !== undefined && next.start === m.end && next.perm === '---p' && next.name === '' && next.end - m.start === ARENA));
    const kind = m.name === '[heap]' ? 'brk' : arena ? 'arenas' : m.name === '' || m.name.startsWith('[') ? 'anon' : 'file';
    out[kind] += m.rss;
  });
  return out;
}

interface Kinds { brk: number; arenas: number; anon: number; file: number }

/** The service's VmRSS and its own memoryUsage (after a GC with --gc). */
async function sample(server: ChildProcess, at: string): Promise<Sample> {
  type Reply = { mem: Mem; players: number; spaces: Record<string, number> };
  const reply = new Promise<Reply>((resolve) => {
    const on = (m: unknown) => {
      if (m && typeof m === 'object' && 'mem' in m) { server.off('message', on); resolve(m as Reply); }
    };
    server.on('message', on);
  });
  server.send('mem');
  const { mem, players, spaces } = await reply;
  const s = { at, vmRss: vmRssMb(server.pid!), mem, players, spaces, kinds: residentKinds(readFileSync(`/proc/${server.pid!}/smaps`, 'utf8')) };
  console.log(`${at}: VmRSS ${s.vmRss.toFixed(0)} MB, heap ${mb(mem.heapUsed)}/${mb(mem.heapTotal)} MB, external ${mb(mem.external)} MB, arrayBuffers ${mb(mem.arrayBuffers)} MB, players ${players}, new space ${spaces.new_space} MB, old space ${spaces.old_space} MB, brk ${s.kinds.brk.toFixed(0)} MB, arenas ${s.kinds.arenas.toFixed(0)} MB, anon ${s.kinds.anon.toFixed(0)} MB`);
  return s;
}

function publish(url: string): ChildProcess {
  return spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', '-re',
    '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=30', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-b:v', `${RATE}k`, '-maxrate', `${RATE}k`,
    '-bufsize', `${RATE}k`, '-g', '60', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '128k', '-f', 'flv', url], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** Connects the players 50 at a time (a busy box must not miss the handshake deadline). */
async function connectPlayers(port: number): Promise<RawPlayer[]> {
  const players: RawPlayer[] = [];
  while (players.length < PLAYERS) {
    for (let i = 0; i < 50 && players.length < PLAYERS; i++) players.push(new RawPlayer(port, 'live', 'bench'));
    await sleep(200);
  }
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && players.some((p) => p.bytes < 100_000 && !p.closed)) await sleep(250);
  return players;
}

const uptimeBefore = execFileSync('uptime').toString().trim();
const dir = await mkdtemp(join(tmpdir(), 'bench-rtmp-mem-'));
const server = fork(SERVER, [dir], {
  stdio: ['ignore', 'ignore', 'inherit', 'ipc'], env: { ...process.env, ...extraEnv },
  execArgv: [...process.execArgv, ...(withGc ? ['--expose-gc'] : [])],
});
const { rtmpPort } = await new Promise<{ rtmpPort: number }>((r) => server.once('message', (m) => r(m as never)));
await sleep(3000);
const idle = await sample(server, 'idle');
const publisher = publish(`rtmp://127.0.0.1:${rtmpPort}/live/bench`);
await sleep(5000);
const alone = await sample(server, 'publisher only');

const players = await connectPlayers(rtmpPort);
const during: Sample[] = [];
const b0 = players.map((p) => p.bytes);
const t0 = Date.now();
const c0 = cpuTicks(server.pid!);
if (stall) for (const p of players) p.pause();
for (let i = 0; i < SAMPLES; i++) {
  await sleep(2000);
  if (stall && (i + 1) * 2 >= stall && (i * 2) < stall) for (const p of players) p.resume();
  during.push(await sample(server, `during ${i + 1}`));
}
const secs = (Date.now() - t0) / 1000;
const cpu = (cpuTicks(server.pid!) - c0) / secs;
const rates = players.map((p, i) => ((p.bytes - b0[i]!) * 8) / secs / 1e6).sort((a, b) => a - b);
const dropped = players.filter((p) => p.closed).length;
for (const p of players) p.close();
const after: Sample[] = [];
const leftAt = Date.now();
for (const t of [0, 10, 30]) {
  await sleep(Math.max(0, leftAt + t * 1000 - Date.now()));
  after.push(await sample(server, `${t} s after`));
}
publisher.kill('SIGKILL');
server.send('stop');
await new Promise((r) => server.once('exit', r));
await rm(dir, { recursive: true, force: true });

const row = (s: Sample) => `| ${s.at} | ${s.vmRss.toFixed(0)} | ${mb(s.mem.heapUsed)} / ${mb(s.mem.heapTotal)} | ${s.spaces.new_space} / ${s.spaces.old_space} | ${mb(s.mem.external)} | ${mb(s.mem.arrayBuffers)} | ${s.kinds.brk.toFixed(0)} / ${s.kinds.arenas.toFixed(0)} / ${s.kinds.anon.toFixed(0)} / ${s.kinds.file.toFixed(0)} | ${s.players} |`;
const rss = during.map((s) => s.vmRss).sort((a, b) => a - b);
const date = new Date().toISOString().slice(0, 10);
const envText = Object.keys(extraEnv).length ? Object.entries(extraEnv).map(([k, v]) => `${k}=${v}`).join(' ') : 'none';
const md = `# RTMP players memory ${date} (${label})

\`node bench/rtmp/players-memory.ts ${args.join(' ')}\`: the real service (\`bench/rtmp/server.ts\`, own process,
http.threads 0, log warn), one ffmpeg publisher (testsrc2 640x360 30 fps, x264 ultrafast ${RATE} kbit/s + AAC
128 kbit/s, -re), ${PLAYERS} raw RTMP players (\`raw-player.ts\`: handshake, connect, createStream, play, bytes
counted) in the driver's process. VmRSS from /proc of the service; heap, external and arrayBuffers from the
service's own \`process.memoryUsage()\`${withGc ? ' after a full GC (--expose-gc)' : ' (no forced GC)'}. Extra environment of the service: ${envText}.
The publisher keeps publishing after the players leave.

Load before: \`${uptimeBefore}\`; after: \`${execFileSync('uptime').toString().trim()}\`.

| figure | MB |
|---|---|
| idle (no stream) | ${idle.vmRss.toFixed(0)} |
| publisher only | ${alone.vmRss.toFixed(0)} |
| during ${PLAYERS} players (min / median / max of ${rss.length} samples, 2 s apart${stall ? `; all stalled for the first ${stall} s` : ''}) | ${rss[0]!.toFixed(0)} / ${rss[rss.length >> 1]!.toFixed(0)} / ${rss.at(-1)!.toFixed(0)} |
| 0 / 10 / 30 s after they left | ${after.map((s) => s.vmRss.toFixed(0)).join(' / ')} |
| 30 s after / idle | ${(after[2]!.vmRss / idle.vmRss).toFixed(2)}x |

Service CPU during the load: ${cpu.toFixed(1)} % of one core. Players: median ${rates[rates.length >> 1]!.toFixed(2)} Mbit/s, slowest ${rates[0]!.toFixed(2)} Mbit/s, ${dropped} closed before the end.

New / old space: V8's young and old generation sizes. Resident brk / arenas / anon / file (smaps): glibc's main
arena; glibc's other arenas (malloc from other threads); every other anonymous mapping (V8's pages, large
malloc blocks, stacks); files and code.

| sample | VmRSS MB | heapUsed / heapTotal MB | new / old space MB | external MB | arrayBuffers MB | resident brk / arenas / anon / file MB | players |
|---|---|---|---|---|---|---|---|
${[idle, alone, ...during, ...after].map(row).join('\n')}
`;
await mkdir(RESULTS, { recursive: true });
const out = join(RESULTS, `rtmp-players-memory-${date}-${label}.md`);
await writeFile(out, md);
console.log(`written ${out}`);
