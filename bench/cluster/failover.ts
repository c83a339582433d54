import { writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addProcess, countByNode, ffmpegs, killLeftovers, markerToken, placementOf, processBody, startCluster } from '../../test/plugins/cluster/failover-kit.ts';
import { waitFor } from '../../test/helpers/wait.ts';

/**
 * Failover of 50 processes (issue 20, item 5): three nats-servers and three service nodes (OS
 * processes, each on its own server), 50 light ffmpegs (lavfi 64x64 at 5 fps to the null muxer)
 * spread about 17 per node. Then one node that is not the leader "dies" (SIGKILL of the service
 * and of its ffmpegs, as when its machine goes down) and the process table is polled every 100 ms
 * until every process runs exactly once on the two others. Reported: the time to the first and
 * to the last replacement ffmpeg, with the ttl (the floor: a dead node's leases expire after ttl),
 * per round, and the machine load. Run: `node bench/cluster/failover.ts [processes, default 50]
 * [ttl seconds, default 4] [rounds, default 3]`. Writes bench/results/cluster-failover-<date>.{json,md}.
 */

const PROCESSES = Number(process.argv[2] ?? 50);
const TTL = Number(process.argv[3] ?? 4);
const ROUNDS = Number(process.argv[4] ?? 3);

interface Round { killed: string; moved: number; firstMs: number; allMs: number; loadBefore: number[]; loadAfter: number[] }

async function round(): Promise<Round> {
  const teardowns: (() => unknown)[] = [];
  const t = { teardown: (fn: () => unknown) => { teardowns.push(fn); } };
  const token = markerToken();
  try {
    const cluster = await startCluster(t, { ttl: TTL });
    const ids = Array.from({ length: PROCESSES }, (_, i) => `bench-${i}`);
    await Promise.all(ids.map((id) => {
      const body = processBody(id, token);
      (body.input as { address: string }[])[0]!.address = 'testsrc2=size=64x64:rate=5';
      return addProcess(cluster.nodes[0]!, body);
    }));
    const spread = await waitFor(() => placementOf(token, cluster.nodes, ids), { timeout: 120_000, interval: 250, what: `${PROCESSES} ffmpegs running` });
    const leader = ((await cluster.nodes[0]!.request('GET', '/api/v3/cluster')).body as { leader: string }).leader;
    const counts = countByNode(spread);
    const victim = cluster.nodes.filter((n) => n.id !== leader).sort((x, y) => (counts[y.id] ?? 0) - (counts[x.id] ?? 0))[0]!;
    const alive = cluster.nodes.filter((n) => n !== victim);
    const moved = ids.filter((id) => spread.get(id) === victim.id);
    const loadBefore = loadavg();
    const doomed = ffmpegs(token).filter((f) => f.ppid === victim.app.child.pid);
    const gone = new Set(doomed.map((f) => f.pid));
    const start = performance.now();
    victim.app.child.kill('SIGKILL');
    for (const f of doomed) process.kill(f.pid, 'SIGKILL');
    let firstMs = 0;
    await waitFor(() => {
      // a killed ffmpeg lingers in /proc for a moment: only new pids count as replacements
      const running = new Set(ffmpegs(token).filter((f) => !gone.has(f.pid)).map((f) => f.id));
      if (!firstMs && moved.some((id) => running.has(id))) firstMs = performance.now() - start;
      return placementOf(token, alive, ids);
    }, { timeout: 120_000, interval: 100, what: 'every process running on the two nodes left' });
    const allMs = performance.now() - start;
    return { killed: victim.id, moved: moved.length, firstMs: Math.round(firstMs), allMs: Math.round(allMs), loadBefore, loadAfter: loadavg() };
  } finally {
    for (const fn of teardowns.reverse()) await fn();
    killLeftovers(token);
  }
}

const rounds: Round[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const r = await round();
  process.stderr.write(`round ${i + 1}: ${r.moved} moved from ${r.killed}, first ${r.firstMs} ms, all ${r.allMs} ms\n`);
  rounds.push(r);
}
const date = new Date().toISOString().slice(0, 10);
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
const result = { date, node: process.version, cpus: cpus().length, processes: PROCESSES, ttl_sec: TTL, announce_sec: 1, rounds };
const fmt = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
const md = [
  `# Cluster failover, ${date}`, '',
  `Node ${process.version}, ${cpus().length} CPUs. Three nats-servers and three nodes on one machine, ${PROCESSES} processes`,
  `(lavfi 64x64 at 5 fps to the null muxer), ttl_sec ${TTL}, announce_sec 1; a non-leader node killed with its ffmpegs.`, '',
  '| Round | Node killed | Processes moved | First replacement (ms) | All running elsewhere (ms) | Load before | Load after |',
  '|---|---|---|---|---|---|---|',
  ...rounds.map((r, i) => `| ${i + 1} | ${r.killed} | ${r.moved} | ${r.firstMs} | ${r.allMs} | ${fmt(r.loadBefore)} | ${fmt(r.loadAfter)} |`),
  '', `Median: first ${median(rounds.map((r) => r.firstMs))} ms, all ${median(rounds.map((r) => r.allMs))} ms (about ttl, ${TTL * 1000} ms, is the floor:`,
  'the dead node\'s announcement and its ownership leases expire ttl after their last renewal, which came up to ttl/6 before the kill; then the leader re-places and the new owners acquire).', '',
].join('\n');
const out = fileURLToPath(new URL('../results/', import.meta.url));
await writeFile(join(out, `cluster-failover-${date}.json`), JSON.stringify(result, null, 2) + '\n');
await writeFile(join(out, `cluster-failover-${date}.md`), md);
process.stdout.write(md);
