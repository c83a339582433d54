import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { loaderArgs } from '../runtime/loader.ts';

/**
 * Cost of the front door's response encoding (issue 17 item 4: gzip and `?pretty`) on the hot
 * routes: `GET /api/v3/process` with 1,000 stored processes and `GET /memfs/<playlist>` (~400 B),
 * for a client that does not ask for gzip, on two builds side by side (before = a checkout
 * without the encoding hook, after = this tree), alternating rounds so machine load hits both
 * alike; plus the list with `Accept-Encoding: gzip` on "after" (bytes on the wire).
 *
 *   node bench/front/run.ts <before-tree> [seconds per round, default 3] [rounds, default 3]
 *
 * Writes bench/results/front-<date>.{json,md}.
 */

const BEFORE = process.argv[2];
if (!BEFORE) throw new Error('usage: run.ts <before-tree> [seconds] [rounds]');
const SECONDS = Number(process.argv[3] ?? 3);
const ROUNDS = Number(process.argv[4] ?? 3);
const AFTER = fileURLToPath(new URL('../..', import.meta.url));
const PLAYLIST = `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n${Array.from({ length: 6 }, (_, i) => `#EXTINF:2.000,\nseg_${i}.ts\n`).join('')}`;

interface Server { child: ChildProcess; url: string; dir: string }

async function startServer(tree: string): Promise<Server> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-front-'));
  const child = fork(join(resolve(tree), 'bench/process/server.ts'), [dir, '1000'], { execArgv: loaderArgs(), cwd: tree });
  const url = await new Promise<string>((res, rej) => {
    child.once('message', (m) => res((m as { url: string }).url));
    child.once('exit', (code) => rej(new Error(`server exited (${code})`)));
  });
  const s = { child, url, dir };
  // through the API: the memfs mount itself asks for its generated basic-auth password
  const put = await fetch(`${url}/api/v3/fs/mem/bench.m3u8`, { method: 'PUT', body: PLAYLIST });
  if (put.status >= 300) {
    await stopServer(s);
    throw new Error(`PUT playlist: ${put.status}`);
  }
  return s;
}

async function stopServer(s: Server): Promise<void> {
  const gone = new Promise((r) => s.child.once('exit', r));
  s.child.send('stop');
  await gone;
  await rm(s.dir, { recursive: true, force: true });
}

type Run = { rps: number; p99: number; bytes: number };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measure(url: string, connections: number, headers: Record<string, string> = {}): Promise<Run> {
  const r = await autocannon({ url, connections, duration: SECONDS, headers } as autocannon.Options);
  return { rps: r.requests.average, p99: r.latency.p99, bytes: r.throughput.total / Math.max(1, r.requests.total) };
}

async function main(): Promise<void> {
  const before = await startServer(BEFORE);
  const after = await startServer(AFTER).catch(async (err) => { await stopServer(before); throw err; });
  const cases = [
    { name: 'list (1,000 processes), 10 conn', path: '/api/v3/process', connections: 10 },
    { name: 'memfs playlist, 100 conn', path: '/memfs/bench.m3u8', connections: 100 },
  ];
  const results: Record<string, Record<string, Run>> = {};
  try {
    for (const c of cases) {
      await measure(before.url + c.path, c.connections);
      await measure(after.url + c.path, c.connections);
      const runs: { before: Run[]; after: Run[] } = { before: [], after: [] };
      for (let i = 0; i < ROUNDS; i++) {
        runs.before.push(await measure(before.url + c.path, c.connections));
        runs.after.push(await measure(after.url + c.path, c.connections));
      }
      const pick = (rs: Run[]) => ({ rps: median(rs.map((r) => r.rps)), p99: median(rs.map((r) => r.p99)), bytes: median(rs.map((r) => r.bytes)) });
      results[c.name] = { before: pick(runs.before), after: pick(runs.after) };
    }
    const gz: Run[] = [];
    for (let i = 0; i < ROUNDS; i++) gz.push(await measure(after.url + '/api/v3/process', 10, { 'accept-encoding': 'gzip' }));
    results['list gzip, 10 conn'] = { after: { rps: median(gz.map((r) => r.rps)), p99: median(gz.map((r) => r.p99)), bytes: median(gz.map((r) => r.bytes)) } };
  } finally {
    await stopServer(before);
    await stopServer(after);
  }
  const date = new Date().toISOString().slice(0, 10);
  const out = { date, node: process.version, cpus: cpus().length, loadavg: loadavg(), seconds: SECONDS, rounds: ROUNDS, results };
  const md = [`# Front door encoding: before/after (${date}, node ${process.version}, ${cpus().length} cores, load ${loadavg().map((l) => l.toFixed(1)).join(' ')})`, '',
    `autocannon, ${ROUNDS} alternating rounds of ${SECONDS} s after a warm-up; medians. Bytes = response bytes per request.`, '',
    '| case | before req/s | after req/s | before p99 ms | after p99 ms | bytes/request |', '|---|---|---|---|---|---|',
    ...Object.entries(results).map(([name, r]) => `| ${name} | ${r.before?.rps.toFixed(0) ?? '-'} | ${r.after!.rps.toFixed(0)} | ${r.before?.p99 ?? '-'} | ${r.after!.p99} | ${r.after!.bytes.toFixed(0)} |`),
    ''].join('\n');
  const base = fileURLToPath(new URL(`../results/front-${date}`, import.meta.url));
  await writeFile(`${base}.json`, JSON.stringify(out, null, 2) + '\n');
  await writeFile(`${base}.md`, md);
  process.stdout.write(md);
}

await main();
