import { fork, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { loaderArgs } from '../runtime/loader.ts';

/**
 * GraphQL `processes` against `GET /api/v3/process` with 1,000 stored processes (order stop, so
 * no ffmpeg runs), issue 16 item 4: the GraphQL list within 2x of the REST list's time.
 * The server is bench/process/server.ts (the real service, default plugins, in its own process).
 * Run: `node bench/graphql/processes.ts [seconds per round, default 5] [rounds, default 3]`.
 * Identical queries over unchanged processes are answered from kept answers (result-cache.ts);
 * the `+ about` case makes every request execute and serialize the whole list.
 * Writes bench/results/graphql-<date>.{json,md}.
 */

const SECONDS = Number(process.argv[2] ?? 5);
const ROUNDS = Number(process.argv[3] ?? 3);
const STORED = 1000;
const SERVER = fileURLToPath(new URL('../process/server.ts', import.meta.url));

const IO = 'id address index stream format type codec coder frame fps packet pps size_kb bitrate_kbit pixfmt q width height sampling layout channels avstream { input { state packet time size_kb } output { state packet time size_kb } aqueue queue dup drop enc looping duplicating gop }';
/** Every field of every part: what the REST list sends, in the reference's GraphQL shape. */
const FULL = `{ processes { id type reference created_at
  config { id type reference input { id address options } output { id address options } options reconnect reconnect_delay_seconds autostart stale_timeout_seconds limits { cpu_usage memory_bytes waitfor_seconds } }
  state { order state runtime_seconds reconnect_seconds last_logline memory_bytes cpu_usage command
    progress { input { ${IO} } output { ${IO} } frame packet fps q size_kb time bitrate_kbit speed drop dup } }
  report { created_at prelude log { timestamp data } history { created_at prelude log { timestamp data } } }
  metadata } }`;
/** The same with a field that is never kept (about), so the whole query runs on every request. */
const FULL_UNKEPT = FULL.replace(/\}$/, 'about { app } }');
/** The example selection. */
const PARTS = '{ processes { id state { state order runtime_seconds } report { created_at log { timestamp data } } metadata } }';

interface Case { name: string; method: 'GET' | 'POST'; path: string; body?: string }

const CASES: [Case, Case][] = [
  [{ name: 'REST list, all parts', method: 'GET', path: '/api/v3/process' },
    { name: 'GraphQL processes, every field', method: 'POST', path: '/api/graph/query', body: JSON.stringify({ query: FULL }) }],
  [{ name: 'REST list, all parts (again)', method: 'GET', path: '/api/v3/process' },
    { name: 'GraphQL processes, every field, + about (executed every time)', method: 'POST', path: '/api/graph/query', body: JSON.stringify({ query: FULL_UNKEPT }) }],
  [{ name: 'REST list, state,report,metadata', method: 'GET', path: '/api/v3/process?filter=state,report,metadata' },
    { name: 'GraphQL processes { state report metadata }', method: 'POST', path: '/api/graph/query', body: JSON.stringify({ query: PARTS }) }],
  [{ name: 'REST list, state,report,metadata (again)', method: 'GET', path: '/api/v3/process?filter=state,report,metadata' },
    { name: 'GraphQL processes { state report metadata }, + about (executed every time)', method: 'POST', path: '/api/graph/query', body: JSON.stringify({ query: PARTS.replace(/\}$/, 'about { app } }') }) }],
];

async function startServer(): Promise<{ child: ChildProcess; url: string; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-graphql-'));
  const child = fork(SERVER, [dir, String(STORED)], { execArgv: loaderArgs() });
  const msg = await new Promise<{ url: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { url: string }));
    child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
  });
  return { child, dir, url: msg.url };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const load = loadavg()[0]!;
  const s = await startServer();
  const results: Record<string, { bytes: number; req_per_sec: number; p50_ms: number; p99_ms: number; non2xx: number }> = {};
  try {
    const opts = (c: Case, duration: number) => {
      const headers: Record<string, string> = c.body ? { 'content-type': 'application/json' } : {};
      return { url: s.url + c.path, method: c.method, body: c.body, connections: 1, duration, headers };
    };
    for (const pair of CASES) {
      for (const c of pair) {
        const r = await fetch(s.url + c.path, { method: c.method, body: c.body, headers: opts(c, 1).headers });
        const text = await r.text();
        if (r.status !== 200 || text.includes('"errors"')) throw new Error(`${c.name}: ${r.status} ${text.slice(0, 300)}`);
        results[c.name] = { bytes: Buffer.byteLength(text), req_per_sec: 0, p50_ms: 0, p99_ms: 0, non2xx: 0 };
        await autocannon(opts(c, 1)); // warm-up: caches, JIT, graphql-jit compilation
      }
      // alternating rounds, so that other load on a shared machine hits both alike
      const rounds: Record<string, autocannon.Result[]> = {};
      for (let i = 0; i < ROUNDS; i++) for (const c of pair) (rounds[c.name] ??= []).push(await autocannon(opts(c, SECONDS)));
      for (const c of pair) {
        const rs = rounds[c.name]!;
        Object.assign(results[c.name]!, {
          req_per_sec: median(rs.map((r) => Math.round(r.requests.average))),
          p50_ms: median(rs.map((r) => r.latency.p50)),
          p99_ms: median(rs.map((r) => r.latency.p99)),
          non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
        });
      }
    }
  } finally {
    const exited = new Promise((r) => s.child.once('exit', r));
    s.child.send('stop');
    await exited;
    await rm(s.dir, { recursive: true, force: true });
  }

  const ratios = CASES.map(([rest, gq]) => ({
    rest: rest.name, graphql: gq.name,
    time_ratio: Number((results[rest.name]!.req_per_sec / Math.max(1, results[gq.name]!.req_per_sec)).toFixed(2)),
  }));
  const meta = { date: new Date().toISOString(), node: process.version, cpus: `${cpus().length} x ${cpus()[0]?.model ?? '?'}`, load_avg_1m_at_start: Number(load.toFixed(2)) };
  // the aim is about what a client asking again and again sees; the executed-every-time figures are shown beside it
  const aim = ratios.filter((r) => !r.graphql.includes('executed every time')).every((r) => r.time_ratio <= 2);
  const note = 'Requests are sequential (1 connection), so req/s is 1 / time per request; the ratio is REST req/s over GraphQL req/s. '
    + 'Identical queries over unchanged processes come from kept answers (plugins/graphql/result-cache.ts: every request reads the processes again and compares them by identity); '
    + '`+ about` adds a field that is never kept, so those requests execute the whole query (graphql-jit) and serialize it each time.';
  const date = meta.date.slice(0, 10);
  const dir = fileURLToPath(new URL('../results/', import.meta.url));
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `graphql-${date}.json`), JSON.stringify({ meta, stored: STORED, results, ratios, aim_within_2x: aim }, null, 2) + '\n');
  const md = [
    `# GraphQL vs REST process list, ${meta.date}`, '',
    `Node ${meta.node}, ${meta.cpus}, load average ${meta.load_avg_1m_at_start} at start. ${STORED} stored processes (order stop), the real service with the default plugins in its own process (bench/process/server.ts); autocannon with 1 connection, 1 s warm-up, ${ROUNDS} alternating rounds of ${SECONDS} s, medians.`, '',
    '| request | bytes | req/s | p50 ms | p99 ms | non-2xx |', '|---|---:|---:|---:|---:|---:|',
    ...Object.entries(results).map(([n, r]) => `| ${n} | ${r.bytes} | ${r.req_per_sec} | ${r.p50_ms} | ${r.p99_ms} | ${r.non2xx} |`), '',
    '| pair | GraphQL time / REST time |', '|---|---:|',
    ...ratios.map((r) => `| ${r.graphql} / ${r.rest} | ${r.time_ratio} |`), '',
    note, '',
    `Aim: GraphQL within 2x of the REST list (repeated queries): ${aim ? 'met' : 'NOT met'}.`, '',
  ];
  await writeFile(join(dir, `graphql-${date}.md`), md.join('\n'));
  console.log(md.join('\n'));
}

await main();
