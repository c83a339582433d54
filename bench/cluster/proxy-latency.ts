import { writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { addProcess, killLeftovers, markerToken, processBody, startCluster, type Node } from '../../test/plugins/cluster/failover-kit.ts';
import { waitFor } from '../../test/helpers/wait.ts';

/**
 * API latency through a proxying node vs at the owner (issue 20, item 5): three nats-servers and
 * three service nodes (OS processes), one light process. `GET /api/v3/process/{id}` is measured
 * with autocannon at the node that runs the process and at a node that proxies it there
 * (`plugins/cluster/proxy.ts`), alternating rounds, at 1 connection (latency) and 16 (throughput).
 * Reported: medians of the mean, p50, p99 (ms; autocannon's percentiles are whole ms) and requests/s, with the machine load. Run:
 * `node bench/cluster/proxy-latency.ts [seconds per round, default 5] [rounds, default 3]`.
 * Writes bench/results/cluster-proxy-<date>.{json,md}.
 */

const SECONDS = Number(process.argv[2] ?? 5);
const ROUNDS = Number(process.argv[3] ?? 3);

interface Run { mean: number; p50: number; p99: number; rps: number; non2xx: number }

async function measure(url: string, connections: number): Promise<Run> {
  const r = await autocannon({ url, connections, duration: SECONDS } as autocannon.Options);
  return { mean: r.latency.average, p50: r.latency.p50, p99: r.latency.p99, rps: r.requests.average, non2xx: r.non2xx + r.errors };
}

const teardowns: (() => unknown)[] = [];
const t = { teardown: (fn: () => unknown) => { teardowns.push(fn); } };
const token = markerToken();
const id = 'bench-proxy';
const results: Record<string, Record<'owner' | 'proxied', Run[]>> = {};
const loadBefore = loadavg();
try {
  const cluster = await startCluster(t, { ttl: 4 });
  await addProcess(cluster.nodes[0]!, processBody(id, token));
  const ownerId = await waitFor(async () => {
    const v = (await cluster.nodes[0]!.request('GET', '/api/v3/cluster')).body as { assignments: { process_id: string; node_id: string }[] };
    return v.assignments.find((a) => a.process_id === id)?.node_id;
  }, { timeout: 30_000, what: 'the process assigned' });
  const owner: Node = cluster.node(ownerId);
  const proxy: Node = cluster.nodes.find((n) => n.id !== ownerId)!;
  const path = `/api/v3/process/${id}`;
  // the proxying node answers with the owner's running state once it read the cluster key
  await waitFor(async () => ((await proxy.request('GET', `${path}/state`)).body as { exec: string }).exec === 'running',
    { timeout: 30_000, what: 'the running state through the proxying node' });
  for (const connections of [1, 16]) {
    const key = `${connections} connection${connections > 1 ? 's' : ''}`;
    results[key] = { owner: [], proxied: [] };
    await measure(owner.app.url + path, connections);
    await measure(proxy.app.url + path, connections);
    for (let i = 0; i < ROUNDS; i++) {
      results[key].owner.push(await measure(owner.app.url + path, connections));
      results[key].proxied.push(await measure(proxy.app.url + path, connections));
    }
  }
} finally {
  for (const fn of teardowns.reverse()) await fn();
  killLeftovers(token);
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
const date = new Date().toISOString().slice(0, 10);
const summary = Object.fromEntries(Object.entries(results).map(([k, r]) => [k, Object.fromEntries((['owner', 'proxied'] as const).map((w) => [w, {
  mean: Number(median(r[w].map((x) => x.mean)).toFixed(2)), p50: median(r[w].map((x) => x.p50)), p99: median(r[w].map((x) => x.p99)), rps: Math.round(median(r[w].map((x) => x.rps))),
  non2xx: r[w].reduce((s, x) => s + x.non2xx, 0),
}]))]));
const loadAfter = loadavg();
const result = { date, node: process.version, cpus: cpus().length, seconds: SECONDS, rounds: ROUNDS, loadBefore, loadAfter, summary, results };
const fmt = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
const md = [
  `# Cluster proxy latency, ${date}`, '',
  `Node ${process.version}, ${cpus().length} CPUs, load ${fmt(loadBefore)} before, ${fmt(loadAfter)} after. Three nats-servers and three`,
  'nodes (OS processes) on one machine; `GET /api/v3/process/{id}` of one running process, autocannon',
  `${SECONDS} s per round, ${ROUNDS} alternating rounds after a warm-up; medians.`, '',
  '| Connections | Where | mean (ms) | p50 (ms) | p99 (ms) | Requests/s | Non-2xx/errors |',
  '|---|---|---|---|---|---|---|',
  ...Object.entries(summary).flatMap(([k, s]) => (['owner', 'proxied'] as const).map((w) =>
    `| ${k} | ${w === 'owner' ? 'at the owner' : 'through another node'} | ${s[w]!.mean} | ${s[w]!.p50} | ${s[w]!.p99} | ${s[w]!.rps} | ${s[w]!.non2xx} |`)),
  '', 'Through another node a request is authorized there, then streamed to the owner over a kept-alive',
  'connection with the hop and signed client headers; the difference is that hop (one loopback HTTP request).',
  'autocannon\'s latencies have whole-ms resolution: at 1 connection, 1 / requests per second is the time per request.', '',
].join('\n');
const out = fileURLToPath(new URL('../results/', import.meta.url));
await writeFile(join(out, `cluster-proxy-${date}.json`), JSON.stringify(result, null, 2) + '\n');
await writeFile(join(out, `cluster-proxy-${date}.md`), md);
process.stdout.write(md);
