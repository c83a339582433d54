import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loaderArgs } from '../runtime/loader.ts';
import { answerParent, startCore } from './servers.ts';

/**
 * The HLS upload path (issue 29, point 3): 20 real ffmpegs (testsrc 320x240, libx264 ultrafast at a
 * low bitrate, `-f hls -hls_time 2 -method PUT`, segments deleted as they leave the list) write into
 * memfs through the file door; the service's CPU is read from /proc/<pid>/stat (utime + stime,
 * all its threads) over the window, after a warm-up, and over a window with no ffmpeg before
 * (idle). Service: disk-fs, memfs (public writes without credentials), sessions (default
 * settings), `http.threads: 0`, log level error. Per segment: (busy - idle) / segments, where the
 * segments are counted from the uploads memfs saw.
 *
 * Needs ffmpeg with libx264. `BENCH_CPU_PROF=<dir>` runs the service with `--cpu-prof`; `BENCH_NODE_ARGS` adds node
 * flags to it (e.g. `--trace-gc`).
 * Run: `node bench/memfs/hls-upload-cpu.ts [ffmpegs, default 20] [window s, default 60] [file tag]`.
 * Writes bench/results/hls-upload-cpu-<date>[-tag].md.
 */

const FFMPEGS = Number(process.argv[2] ?? 20);
const WINDOW_S = Number(process.argv[3] ?? 60);
const TAG = process.argv[4] ? `-${process.argv[4]}` : '';
const IDLE_S = 10;
const WARM_S = 10;
const PROF = process.env.BENCH_CPU_PROF;
const TICK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** utime + stime of a process (every thread), in seconds. */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICK;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function startFfmpeg(base: string, i: number): ChildProcess {
  return spawn('ffmpeg', [
    '-hide_banner', '-nostdin', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-b:v', '300k', '-g', '50', '-pix_fmt', 'yuv420p',
    '-f', 'hls', '-hls_time', '2', '-hls_list_size', '6', '-hls_flags', 'delete_segments', '-method', 'PUT',
    `${base}/memfs/bench/s${i}/index.m3u8`,
  ], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** Segments memfs holds or held: the highest `index<N>.ts` each stream's playlist names. */
async function segmentsSoFar(base: string): Promise<number> {
  let n = 0;
  for (let i = 0; i < FFMPEGS; i++) {
    const r = await fetch(`${base}/memfs/bench/s${i}/index.m3u8`);
    const text = await r.text();
    const last = [...text.matchAll(/index(\d+)\.ts/g)].map((m) => Number(m[1])).pop();
    if (last !== undefined) n += last + 1;
  }
  return n;
}

async function main(): Promise<void> {
  const execArgv = [...loaderArgs(), ...(PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`] : []), ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [])];
  const server = fork(fileURLToPath(import.meta.url), ['serve'], { execArgv });
  const base = await new Promise<string>((resolve, reject) => {
    server.once('message', (m) => resolve((m as { url: string }).url));
    server.once('exit', (code) => reject(new Error(`server exited (${code})`)));
  });
  const pid = server.pid!;
  const ffmpegs: ChildProcess[] = [];
  try {
    await sleep(2000);
    const idle0 = await cpuSeconds(pid);
    await sleep(IDLE_S * 1000);
    const idle = (await cpuSeconds(pid) - idle0) / IDLE_S;
    for (let i = 0; i < FFMPEGS; i++) ffmpegs.push(startFfmpeg(base, i));
    await sleep(WARM_S * 1000);
    const up0 = uptime();
    const seg0 = await segmentsSoFar(base);
    const c0 = await cpuSeconds(pid);
    const f0 = await Promise.all(ffmpegs.map((f) => cpuSeconds(f.pid!)));
    const t0 = Date.now();
    await sleep(WINDOW_S * 1000);
    const busy = (await cpuSeconds(pid) - c0) / ((Date.now() - t0) / 1000);
    const f1 = await Promise.all(ffmpegs.map((f) => cpuSeconds(f.pid!)));
    const segments = await segmentsSoFar(base) - seg0;
    const up1 = uptime();
    const ffmpegCpu = f1.reduce((s, x, i) => s + x - f0[i]!, 0) / WINDOW_S;
    const perSegmentMs = ((busy - idle) * WINDOW_S * 1000) / segments;
    const date = new Date().toISOString();
    const text = [
      `# HLS uploads into memfs: service CPU with ${FFMPEGS} ffmpegs, ${date}`, '',
      `Node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? '?'}. ${FFMPEGS} ffmpegs (testsrc 320x240 25 fps, libx264 ultrafast 300 kbit/s, `
        + `hls_time 2, list of 6, delete_segments, PUT to /memfs/...), ${WARM_S} s of warm-up, then ${WINDOW_S} s measured; the service's CPU from `
        + `/proc/<pid>/stat (utime + stime). Service: disk-fs, memfs (public writes, no credentials), sessions (default settings), \`http.threads: 0\`${PROF ? ', with --cpu-prof' : ''}.`, '',
      `uptime at the window's start: \`${up0}\``, `uptime at its end: \`${up1}\``, '',
      '| figure | value |', '|---|---:|',
      `| service CPU, idle (${IDLE_S} s before the ffmpegs) | ${(idle * 100).toFixed(2)} % of a core |`,
      `| service CPU with ${FFMPEGS} ffmpegs | ${(busy * 100).toFixed(2)} % of a core |`,
      `| segments stored in the window | ${segments} |`,
      `| service CPU per segment (its playlist PUT and DELETE included), above idle | ${perSegmentMs.toFixed(2)} ms |`,
      `| the ffmpegs' CPU (sum) | ${(ffmpegCpu * 100).toFixed(0)} % of a core |`, '',
    ].join('\n');
    const dir = fileURLToPath(new URL('../results/', import.meta.url));
    await mkdir(dir, { recursive: true });
    const file = join(dir, `hls-upload-cpu-${date.slice(0, 10)}${TAG}.md`);
    await writeFile(file, text);
    console.log(text);
    console.log(`wrote ${file}`);
  } finally {
    await Promise.all(ffmpegs.map((f) => new Promise((resolve) => {
      if (f.exitCode !== null || f.signalCode !== null) resolve(undefined);
      else { f.once('exit', resolve); f.kill('SIGINT'); }
    })));
    await new Promise((resolve) => { server.once('exit', resolve); server.send('stop'); });
  }
}

const uptime = (): string => execFileSync('uptime', { encoding: 'utf8' }).trim();

/** The server child: the service with public memfs writes, the sessions plugin, no serving threads. */
async function serve(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-hls-upload-'));
  const core = await startCore(dir, { http: { threads: 0 }, plugins: ['disk-fs', 'memfs', 'sessions'], sessions: { enable: true } });
  process.send!({ url: core.url });
  answerParent(core, dir);
}

if (process.argv[2] === 'serve') void serve();
else await main();
