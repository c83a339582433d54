import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCheckout, startDeployed, type Deployed } from './deployed.ts';
import { startFloor, type Floor } from './hls-floor.ts';

/**
 * The everyday path (issue 46.1): N processes run by the service, each reading a looped H.264/AAC
 * file (`-re -stream_loop -1`, copied, so the ffmpegs cost little) and writing either to the null
 * muxer or HLS into memfs as restreamer-ui's channels do (`{memfs}`, PUT, 2 s segments, a list of
 * 6, segments deleted as they leave it). What HLS costs the service is the difference of its CPU
 * between the two, per process. The service is started as deployed (`deployed.ts`: the built JS,
 * `app/main.js`, its relaunch, default plugins); its CPU is utime + stime of the main process
 * (all its threads) over the window, read from /proc, after a warm-up. Rounds alternate the
 * outputs (null, hls, hls, null, ...) for each count, so load on the box hits both alike; the
 * medians are the figures. `--modes` picks the outputs (default `null,hls,floor`; `persistent` is HLS with
 * `-http_persistent 1`; `challenged` is HLS with an operator's own `-headers`, so the service adds no
 * credential header and every upload is asked twice, as before issue 46.1); `floor` is the same ffmpegs writing to a bare `node:http` server (hls-floor.ts),
 * `floor-net` to bare `node:net` sockets with a minimal HTTP reading of its own (what the runtime and the kernel spend).
 * Run: `node bench/process/hls-memfs.ts [--counts 20,100] [--rounds 4] [--window 30] [--warm 10] [--modes null,hls,floor] [--prof DIR] [--write [tag]]`.
 * `--write` writes bench/results/hls-memfs-<date>[-tag].md. `--prof DIR`: one more round of each output and
 * count after the measured ones, with a CPU profile of its window (`DIR/hls-memfs-<count>-<output>.cpuprofile`,
 * read with bench/memfs/cpu-prof-top.ts); those rounds are not in the figures. Needs ffmpeg with libx264.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const args = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] && !args[i + 1]!.startsWith('--') ? args[i + 1]! : def;
};
const COUNTS = opt('counts', '20,100').split(',').map(Number);
const ROUNDS = Number(opt('rounds', '4'));
const WINDOW_S = Number(opt('window', '30'));
const WARM_S = Number(opt('warm', '10'));
const WRITE = args.includes('--write');
const PROF = opt('prof', '');
const TAG = WRITE && opt('write', '') ? `-${opt('write', '')}` : '';
const TICK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Mode = 'null' | 'hls' | 'challenged' | 'persistent' | 'floor' | 'floor-net';
const MODES = opt('modes', 'null,hls,floor').split(',') as Mode[];

function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICK;
}

/** Ten seconds of 320x240 25 fps H.264 (300 kbit/s, a keyframe every 2 s) and AAC, in MPEG-TS. */
function makeSample(file: string): void {
  const r = spawnSync('ffmpeg', [
    '-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440',
    '-t', '10', '-c:v', 'libx264', '-preset', 'ultrafast', '-b:v', '300k', '-g', '50', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '64k', file,
  ], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('ffmpeg could not make the sample');
}

/** restreamer-ui's HLS output, as far as the server sees it (`persistent`: one keep-alive connection per output). */
const hlsOptions = (id: string, persistent = false, own: string[] = []): string[] => [
  '-c', 'copy', '-f', 'hls', '-start_number', '0', '-hls_time', '2', '-hls_list_size', '6', '-hls_flags', 'append_list+delete_segments',
  '-hls_segment_filename', `{memfs}/bench/${id}_%04d.ts`, ...(persistent ? ['-http_persistent', '1'] : []), ...own, '-method', 'PUT',
];
/** `challenged`: an operator's own `-headers`, so the service adds no credential header and ffmpeg takes the 401 first (before 46.1). */
const CHALLENGED = ['-headers', 'X-Bench: challenged\r\n'];

function processConfig(id: string, mode: Mode) {
  const output = mode === 'hls' || mode === 'persistent' || mode === 'challenged'
    ? { id: 'out', address: `{memfs}/bench/${id}.m3u8`, options: hlsOptions(id, mode === 'persistent', mode === 'challenged' ? CHALLENGED : []) }
    : { id: 'out', address: '-', options: ['-c', 'copy', '-f', 'null'] };
  return {
    id, type: 'ffmpeg', reference: id, autostart: true, reconnect: true, reconnect_delay_seconds: 5, stale_timeout_seconds: 30,
    options: ['-loglevel', 'info', '-err_detect', 'ignore_err'],
    input: [{ id: 'in', address: '{diskfs}/sample.ts', options: ['-re', '-stream_loop', '-1'] }],
    output: [output],
  };
}

async function api(url: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const r = await fetch(url + path, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
  return r.headers.get('content-type')?.includes('json') ? r.json() : r.text();
}

/** Runs `count` processes of `mode`; the service's CPU (% of a core) over the window, and the processes running at its end. */
async function round(svc: Deployed, count: number, mode: Mode, prof?: string): Promise<{ cpu: number; running: number }> {
  if (mode === 'floor' || mode === 'floor-net') return floorRound(count, mode);
  const ids = Array.from({ length: count }, (_, i) => `bench-${mode}-${i}`);
  for (const id of ids) await api(svc.url, 'POST', '/api/v3/process', processConfig(id, mode));
  try {
    await sleep(WARM_S * 1000);
    const c0 = cpuSeconds(svc.pid);
    const t0 = Date.now();
    if (prof) await svc.profile(WINDOW_S * 1000, join(prof, `hls-memfs-${count}-${mode}.cpuprofile`));
    else await sleep(WINDOW_S * 1000);
    const cpu = (cpuSeconds(svc.pid) - c0) / ((Date.now() - t0) / 1000) * 100;
    const list = await api(svc.url, 'GET', '/api/v3/process?filter=state') as Array<{ state?: { exec?: string } }>;
    return { cpu, running: list.filter((p) => p.state?.exec === 'running').length };
  } finally {
    for (const id of ids) await api(svc.url, 'DELETE', `/api/v3/process/${id}`).catch(() => undefined);
    await sleep(3000);
  }
}

const floors = new Map<Mode, Floor>();
let sample = '';

/** The same ffmpegs writing to the bare server; its CPU over the window. */
async function floorRound(count: number, mode: Mode): Promise<{ cpu: number; running: number }> {
  let floor = floors.get(mode);
  if (!floor) floors.set(mode, floor = await startFloor(mode === 'floor-net' ? 'net' : 'http'));
  const stop = floor.run(count, sample, (name) => hlsOptions(name));
  try {
    await sleep(WARM_S * 1000);
    const c0 = cpuSeconds(floor.pid);
    const t0 = Date.now();
    await sleep(WINDOW_S * 1000);
    return { cpu: (cpuSeconds(floor.pid) - c0) / ((Date.now() - t0) / 1000) * 100, running: count };
  } finally {
    await stop();
    await sleep(3000);
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const uptime = () => spawnSync('uptime', { encoding: 'utf8' }).stdout.trim();
const head = () => spawnSync('git', ['-C', ROOT, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).stdout.trim().slice(0, 100);

async function main(): Promise<void> {
  const main = buildCheckout(ROOT);
  const dir = await mkdtemp(join(tmpdir(), 'bench-hls-memfs-'));
  const svc = await startDeployed(ROOT, main, dir, { log: { level: 'warn' } });
  const results = new Map<string, number[]>();
  const notes: string[] = [];
  const load0 = uptime();
  try {
    sample = join(dir, 'disk', 'sample.ts');
    makeSample(sample);
    await sleep(2000);
    const i0 = cpuSeconds(svc.pid);
    await sleep(10_000);
    const idle = (cpuSeconds(svc.pid) - i0) / 10 * 100;
    for (const count of COUNTS) {
      for (let r = 0; r < ROUNDS; r++) {
        for (const mode of r % 2 ? [...MODES].reverse() : MODES) {
          const { cpu, running } = await round(svc, count, mode);
          const key = `${count}/${mode}`;
          results.set(key, [...(results.get(key) ?? []), cpu]);
          if (running !== count) notes.push(`round ${r + 1}, ${count} ${mode}: ${running} of ${count} running at the window's end`);
          console.log(`${count} ${mode}: ${cpu.toFixed(2)} % of a core (${running} running)`);
        }
      }
    }
    if (PROF) {
      await mkdir(PROF, { recursive: true });
      for (const count of COUNTS) for (const mode of MODES.filter((m) => !m.startsWith('floor'))) await round(svc, count, mode, PROF);
    }
    const md = report(idle, results, load0, uptime(), notes);
    console.log(md);
    if (WRITE) {
      const file = join(ROOT, 'bench/results', `hls-memfs-${new Date().toISOString().slice(0, 10)}${TAG}.md`);
      await writeFile(file, md);
      console.log(`wrote ${file}`);
    }
  } finally {
    for (const f of floors.values()) f.stop();
    await svc.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

const LABEL: Record<Mode, string> = {
  null: 'null muxer', hls: 'HLS into memfs', challenged: 'HLS, asked twice (an own `-headers`)', persistent: 'HLS, `-http_persistent 1`', floor: 'floor: bare node:http, the same ffmpegs', 'floor-net': 'floor under node:http: bare node:net sockets, the same ffmpegs',
};

function report(idle: number, results: Map<string, number[]>, load0: string, load1: string, notes: string[]): string {
  const lines = [
    `# HLS into memfs vs the null muxer, processes run by the service (issue 46.1), ${new Date().toISOString()}`, '',
    `${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), Node ${process.version}. Commit: ${head()}.`,
    `uptime before: \`${load0}\`; after: \`${load1}\`.`,
    `The service as deployed (\`app/main.js\`, default plugins, log level warn). Each process: \`-re -stream_loop -1 -i {diskfs}/sample.ts\``,
    `(320x240 25 fps H.264 300 kbit/s + AAC), \`-c copy\` to \`-f null\` or to HLS in memfs (PUT, 2 s segments, list of 6, delete_segments;`,
    `its run credential given by the service as an \`Authorization\` header of the muxer's \`-headers\`, none in the URL: one request per upload;`,
    `"asked twice" is the same with an operator's own \`-headers\`: the credential in the URL, so ffmpeg asks each upload without it first, then again on a new connection).`,
    `The floor: the same ffmpegs started by the bench, writing to a bare \`node:http\` server that does only what memfs does (bench/process/hls-floor.ts);`,
    `the floor under node:http: the same on bare \`node:net\` sockets with a minimal HTTP reading of its own (what the runtime and the kernel spend).`,
    `${WARM_S} s of warm-up, ${WINDOW_S} s measured, ${ROUNDS} rounds per output, alternating; the server's CPU (utime + stime, all threads).`, '',
    `Idle before any process: ${idle.toFixed(2)} % of a core.`, '',
    `| processes | output | % of a core (median) | over the null muxer, per process | rounds |`, '|---:|---|---:|---:|---|',
  ];
  for (const count of COUNTS) {
    const base = median(results.get(`${count}/null`) ?? [NaN]);
    for (const mode of MODES) {
      const xs = results.get(`${count}/${mode}`) ?? [];
      const m = median(xs);
      const per = mode === 'null' ? '' : `${((m - (mode.startsWith('floor') ? 0 : base)) / count).toFixed(3)} %`;
      lines.push(`| ${count} | ${LABEL[mode]} | ${m.toFixed(2)} | ${per} | ${xs.map((x) => x.toFixed(2)).join(' ')} |`);
    }
  }
  lines.push('', 'The floor row is per process over an idle bare server. Aim (issue 46.1): HLS adds at most 0.04 % of a core per process',
    'over the null muxer (the reference: 0.058 %).', '');
  if (notes.length) lines.push('Notes:', '', ...notes.map((n) => `- ${n}`), '');
  return lines.join('\n');
}

await main();
