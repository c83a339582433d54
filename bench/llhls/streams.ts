import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCheckout, startDeployed, type Deployed } from '../process/deployed.ts';
import { api, checkoutOf, cpuOf, freePort, head, makeSample, opt, ROOT, sleep, TAG, uptime, WRITE } from './common.ts';

/**
 * LL-HLS packaged by the service (issue 47.3, 47.6): N streams published into the stream table by
 * N processes of the service (`-re -stream_loop -1` of a 320x240 25 fps H.264 300 kbit/s + AAC
 * file, copied to `{rtmp,name=bench/sN}`), each played in one of three ways, in alternating rounds:
 * - `publish`: nobody plays (the baseline);
 * - `llhls`: the service packages each (`/hls/bench/sN/index.m3u8`, the plugin's defaults: 2 s
 *   segments, 300 ms parts, a 120 s window), one poller per stream asking its playlist every 2 s;
 * - `llhls-slow`: the same, polled every 6 s: with `llhls`, what one playlist request costs and
 *   what packaging costs without requests (the line under the table: cost = packaging + rate x request);
 * - `hls`: one more ffmpeg process per stream reads it (`{rtmp,name=...}`) and writes HLS into
 *   memfs, as restreamer-ui's channels do, polled the same way (`/memfs/bench/sN.m3u8`).
 * The cost per stream of a way is the CPU of the service's whole tree (main + its ffmpegs + its
 * helper hosts; utime + stime from /proc) over the window, less the baseline's, divided by N; RSS
 * is the main process's after the warm-up (for `llhls`: once its windows are full).
 * The service is started as deployed (`deployed.ts`), afresh for each round; with `--compare REV` the
 * service of REV too (a checkout in the temp folder), the two alternating round by round.
 * Run: `node bench/llhls/streams.ts [--streams 100] [--rounds 2] [--window 30] [--warm 20] [--fill 130] [--ll-window 120] [--prof DIR] [--ways publish,llhls,hls] [--compare REV] [--node-args 'A|B'] [--write [tag]]`
 * (`--fill`: the warm-up of an `llhls` round, seconds). `--write` writes bench/results/llhls-streams-<date>[-tag].md.
 */

const STREAMS = Number(opt('streams', '100'));
const ROUNDS = Number(opt('rounds', '2'));
const WINDOW_S = Number(opt('window', '30'));
const WARM_S = Number(opt('warm', '20'));
const FILL_S = Number(opt('fill', '130'));
/** A folder: the main thread's CPU profile of each window goes there (read with bench/memfs/cpu-prof-top.ts). */
const PROF = opt('prof', '');
/** `llhls.window_seconds` (the plugin's default: 120). */
const LL_WINDOW = Number(opt('ll-window', '120'));
/** `llhls-slow` polls every 6 s (the packagers' idle stop is 8 s): with `llhls`, what a playlist request costs and what packaging alone does. */
const SLOW_POLL_MS = 6000;
const IDLE_S = 8;
/** `--compare REV`: the same rounds on the service of REV too (a checkout beside this one), alternating with this one's. */
const COMPARE = opt('compare', '');
/**
 * `--node-args 'A|B'`: this checkout's service once per flag set (`|` between sets, spaces between a
 * set's flags; an empty set: as deployed), the sets alternating round by round like `--compare`.
 */
const NODE_ARGS = process.argv.includes('--node-args') ? process.argv[process.argv.indexOf('--node-args') + 1] ?? '' : '';
type Way = 'publish' | 'llhls' | 'llhls-slow' | 'hls';
/** `--ways publish,llhls`: the ways measured (all three by default). */
const WAYS = opt('ways', 'publish,llhls,hls').split(',') as Way[];

/** Pids of `root` and every process under it. */
function tree(root: number): number[] {
  const out = [root];
  for (let i = 0; i < out.length; i++) {
    try {
      for (const task of readdirSync(`/proc/${out[i]}/task`)) {
        const list = readFileSync(`/proc/${out[i]}/task/${task}/children`, 'utf8').trim();
        for (const c of list ? list.split(' ') : []) out.push(Number(c));
      }
    } catch { /* gone */ }
  }
  return out;
}

/** CPU seconds of the tree by pid (a process that left between two readings counts from its last). */
const cpuTree = (root: number) => new Map(tree(root).map((p) => [p, cpuOf(p)] as const));

function cpuPercent(a: Map<number, number>, b: Map<number, number>, secs: number): number {
  let sum = 0;
  for (const [pid, s] of b) sum += s - (a.get(pid) ?? 0);
  return sum / secs * 100;
}

const publisher = (i: number) => ({
  id: `pub-${i}`, reference: 'bench', autostart: true, reconnect: true, reconnect_delay_seconds: 2,
  input: [{ id: 'in', address: '{diskfs}/sample.ts', options: ['-re', '-stream_loop', '-1'] }],
  output: [{ id: 'out', address: `{rtmp,name=bench/s${i}}`, options: ['-c', 'copy', '-f', 'flv'] }],
});

const hlsWriter = (i: number) => ({
  id: `hls-${i}`, reference: 'bench', autostart: true, reconnect: true, reconnect_delay_seconds: 2,
  input: [{ id: 'in', address: `{rtmp,name=bench/s${i}}`, options: [] }],
  output: [{ id: 'out', address: `{memfs}/bench/s${i}.m3u8`, options: [
    '-c', 'copy', '-f', 'hls', '-start_number', '0', '-hls_time', '2', '-hls_list_size', '6', '-hls_flags', 'append_list+delete_segments',
    '-hls_segment_filename', `{memfs}/bench/s${i}_%04d.ts`, '-method', 'PUT',
  ] }],
});

/** Asks each stream's playlist every 2 s until stopped; counts the answers that were not 200. */
function poll(url: string, path: (i: number) => string, everyMs: number): { stop(): void; failed(): number } {
  let failed = 0;
  const timers = Array.from({ length: STREAMS }, (_, i) => setInterval(() => {
    fetch(url + path(i)).then(async (r) => { await r.arrayBuffer(); if (r.status !== 200) { failed++; if (process.env.BENCH_DEBUG) console.log(path(i), r.status); } }, (e: unknown) => { failed++; if (process.env.BENCH_DEBUG) console.log(path(i), e); });
  }, everyMs + (i % 20)));
  return { stop: () => { for (const t of timers) clearInterval(t); }, failed: () => failed };
}

interface Sample { way: Way; cpu: number; main: number; rss: number; failed: number; side?: string }

async function round(svc: Deployed, way: Way): Promise<Sample> {
  const ll = way === 'llhls' || way === 'llhls-slow';
  const path = ll ? (i: number) => `/hls/bench/s${i}/index.m3u8` : (i: number) => `/memfs/bench/s${i}.m3u8`;
  if (way === 'hls') for (let i = 0; i < STREAMS; i++) await api(svc.url, 'POST', '/api/v3/process', hlsWriter(i));
  const poller = way === 'publish' ? undefined : poll(svc.url, path, way === 'llhls-slow' ? SLOW_POLL_MS : 2000);
  try {
    await sleep((ll ? FILL_S : WARM_S) * 1000);
    const failedBefore = poller?.failed() ?? 0;
    const a = cpuTree(svc.pid);
    const t0 = Date.now();
    if (PROF) await svc.profile(WINDOW_S * 1000, join(PROF, `${way}-streams-${STREAMS}-${Date.now()}.cpuprofile`));
    else await sleep(WINDOW_S * 1000);
    const b = cpuTree(svc.pid);
    const secs = (Date.now() - t0) / 1000;
    const cpu = cpuPercent(a, b, secs);
    const main = ((b.get(svc.pid) ?? 0) - (a.get(svc.pid) ?? 0)) / secs * 100;
    return { way, cpu, main, rss: svc.memory().rss, failed: (poller?.failed() ?? 0) - failedBefore };
  } finally {
    poller?.stop();
    if (way === 'hls') for (let i = 0; i < STREAMS; i++) await api(svc.url, 'DELETE', `/api/v3/process/hls-${i}`).catch(() => undefined);
    // the packagers stop `idle_seconds` after the last request; the memfs files of the writers stay (small)
    await sleep(ll ? (IDLE_S + 10) * 1000 : 5000);
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** A service to measure: this checkout, or (`--compare REV`) the one of REV; `args`: its runtime flags beyond the deployed ones. */
interface Side { label: string; main: string; args?: string[] }

/** One service of `side`: its publishers started, the ways measured once (in `order`), stopped. */
async function serviceRound(side: Side, order: Way[], samples: Sample[]): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-llhls-'));
  const svc = await startDeployed(ROOT, side.main, dir, {
    log: { level: 'warn' }, rtmp: { enable: true, address: `127.0.0.1:${await freePort()}` },
    llhls: { enable: true, idle_seconds: IDLE_S, max_streams: Math.max(100, STREAMS), window_seconds: LL_WINDOW },
    storage: { disk: { dir: join(dir, 'disk') }, memory: { max_size_mbytes: 0 } }, sessions: { enable: false },
  }, side.args);
  try {
    makeSample(join(dir, 'disk', 'sample.ts'));
    for (let i = 0; i < STREAMS; i++) await api(svc.url, 'POST', '/api/v3/process', publisher(i));
    if (process.env.BENCH_DEBUG) {
      await sleep(5000);
      console.log(JSON.stringify(await api(svc.url, 'GET', '/api/v3/process/pub-0/state')).slice(0, 600));
    }
    for (const way of order) {
      const s = { ...(await round(svc, way)), side: side.label };
      samples.push(s);
      console.log(`${side.label} ${way}: ${s.cpu.toFixed(2)} % of a core (main ${s.main.toFixed(2)}), RSS ${s.rss.toFixed(1)} MB, ${s.failed} failed polls`);
    }
  } finally {
    await svc.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const built = buildCheckout(ROOT);
  const sides: Side[] = NODE_ARGS
    ? NODE_ARGS.split('|').map((set) => {
      const args = set.split(' ').filter(Boolean);
      return { label: args.length ? `this ${args.join(' ')}` : 'this', main: built, args };
    })
    : [{ label: 'this', main: built }];
  const base = COMPARE ? checkoutOf(COMPARE) : undefined;
  const samples: Sample[] = [];
  const load0 = uptime();
  try {
    if (base) sides.unshift({ label: COMPARE, main: buildCheckout(base.root) });
    for (let r = 0; r < ROUNDS; r++) {
      // alternating: the sides' order and the ways' order flip every round
      for (const side of r % 2 ? [...sides].reverse() : sides) await serviceRound(side, r % 2 ? [...WAYS].reverse() : WAYS, samples);
    }
  } finally {
    base?.remove();
  }
  const md = report(sides, samples, load0, uptime());
  console.log(md);
  if (WRITE) {
    const file = join(ROOT, 'bench/results', `llhls-streams-${new Date().toISOString().slice(0, 10)}${TAG}.md`);
    await writeFile(file, md);
    console.log(`wrote ${file}`);
  }
}

function report(sides: Side[], samples: Sample[], load0: string, load1: string): string {
  const lines = [
    `# LL-HLS packaged by the service vs one ffmpeg writing HLS into memfs per stream (issue 47), ${new Date().toISOString()}`, '',
    `${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), Node ${process.version}. Commit: ${head()}.`,
    `uptime before: \`${load0}\`; after: \`${load1}\`.`,
    `${STREAMS} streams published by processes of the service (a looped 320x240 25 fps H.264 300 kbit/s + AAC file, copied to RTMP).`,
    `CPU: the service's whole tree (main, its ffmpegs, its helper hosts) over ${WINDOW_S} s after ${WARM_S} s of warm-up (${FILL_S} s for`,
    `\`llhls\`, so its ${LL_WINDOW} s windows are full); ${ROUNDS} rounds, alternating (ways${COMPARE ? ', and the services of this checkout and of ' + COMPARE + ', each started afresh per round' : ''}${NODE_ARGS ? ', and the flag sets, each service started afresh per round' : ''}); medians. RSS: the main process at the window's end.`,
  ];
  for (const side of sides) {
    const named = side.label === 'this' ? `this checkout (${head().split(' ')[0]})` : side.args?.length ? `this checkout with \`${side.args.join(' ')}\`` : side.label;
    lines.push('', ...(sides.length > 1 ? [`Service: ${named}`, ''] : []));
    lines.push(...table(samples.filter((s) => s.side === side.label)));
  }
  lines.push('', 'Aim (issue 47.6): a packaged stream costs at most a tenth of one ffmpeg writing HLS into memfs.', '');
  return lines.join('\n');
}

function table(samples: Sample[]): string[] {
  const of = (way: Way) => samples.filter((s) => s.way === way);
  const base = median(of('publish').map((s) => s.cpu));
  const baseMain = median(of('publish').map((s) => s.main));
  const lines = [
    '| way | tree CPU, % of a core | per stream over the baseline | main process CPU | per stream over the baseline | main RSS (MB) | failed polls | rounds (tree CPU / main) |',
    '|---|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const way of WAYS) {
    const xs = of(way);
    const m = median(xs.map((s) => s.cpu));
    const per = way === 'publish' || Number.isNaN(base) ? '-' : `${((m - base) / STREAMS).toFixed(3)} %`;
    const mm = median(xs.map((s) => s.main));
    const perMain = way === 'publish' || Number.isNaN(baseMain) ? '-' : `${((mm - baseMain) / STREAMS).toFixed(3)} %`;
    lines.push(`| ${way} | ${m.toFixed(2)} | ${per} | ${mm.toFixed(2)} | ${perMain} | ${median(xs.map((s) => s.rss)).toFixed(1)} | ${xs.reduce((n, s) => n + s.failed, 0)} | ${xs.map((s) => `${s.cpu.toFixed(2)}/${s.main.toFixed(2)}`).join(' ')} |`);
  }
  const [fast, slow] = [of('llhls'), of('llhls-slow')];
  if (fast.length > 0 && slow.length > 0) {
    // per stream: cost = packaging + requests per second x a request's cost (0.5 and 1/6 requests per second)
    for (const [what, key] of [['tree', 'cpu'], ['main', 'main']] as const) {
      const b = median(of('publish').map((s) => s[key]));
      const c2 = (median(fast.map((s) => s[key])) - b) / STREAMS;
      const c6 = (median(slow.map((s) => s[key])) - b) / STREAMS;
      const request = (c2 - c6) / (1 / 2 - 1 / 6);
      lines.push('', `${what}: a playlist request ${(request * 10).toFixed(2)} ms of CPU; packaging without requests ${(c2 - request / 2).toFixed(3)} % of a core per stream.`);
    }
  }
  return lines;
}

await main();
