import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { request, type RequestOpts, type TestLike, type TestResponse } from '../../helpers/app.ts';
import { startCli, type CliApp } from '../../helpers/cli.ts';
import { waitFor } from '../../helpers/wait.ts';
import { starterOf } from '../../helpers/net-proc.ts';
import { startNatsCluster, type NatsCluster } from './nats.ts';

/** One service node as its own OS process, connected only to its own nats-server. */
export interface Node {
  id: string;
  app: CliApp;
  nats: NatsCluster['servers'][number];
  request(method: string, path: string, r?: RequestOpts): Promise<TestResponse>;
}

export interface Cluster { nats: NatsCluster; nodes: Node[]; node(id: string): Node }

/**
 * Three nats-servers and three nodes (`a`, `b`, `c`, each on its own server), started and
 * waited for until every node sees all three and a leader. Torn down with the test.
 */
export async function startCluster(t: TestLike & { teardown(fn: () => unknown): void }, opts: { ttl?: number; ids?: string[] } = {}): Promise<Cluster> {
  const ids = opts.ids ?? ['a', 'b', 'c'];
  const nats = await startNatsCluster(ids.length);
  t.teardown(() => nats.stop());
  const nodes: Node[] = [];
  for (const [i, id] of ids.entries()) {
    const app = await startCli(t, {
      id: `node-${id}`, api: { auth: { enable: false } }, sessions: { enable: false }, log: { level: 'warn' },
      plugins: ['disk-fs', 'memfs', { name: 'cluster', config: {
        servers: [nats.servers[i]!.url], node_id: id, ttl_sec: opts.ttl ?? 4, announce_sec: 1, replicas: ids.length,
      } }],
    });
    nodes.push({ id, app, nats: nats.servers[i]!, request: (m, p, r) => request(app.url, m, p, r) });
  }
  await waitFor(async () => {
    const views = await Promise.all(nodes.map(async (n) => (await n.request('GET', '/api/v3/cluster')).body as { leader: string | null; nodes: unknown[] }));
    return views.every((v) => v.nodes.length === ids.length && v.leader && v.leader === views[0]!.leader);
  }, { timeout: 60_000, interval: 250, what: 'the nodes agreeing on a leader' });
  return { nats, nodes, node: (id) => nodes.find((n) => n.id === id)! };
}

/** A run-unique marker: each process's ffmpeg carries `-metadata comment=<token>.<id>`. */
export function markerToken(): string { return `fo${randomBytes(4).toString('hex')}`; }

/**
 * A light endless process (lavfi to the null muxer) that starts, and reconnects after a second.
 * No reference by default: processes sharing one are a channel the cluster keeps on one node.
 */
export function processBody(id: string, token: string, reference = ''): Record<string, unknown> {
  return {
    id, reference, autostart: true, reconnect: true, reconnect_delay_seconds: 1,
    input: [{ id: 'in', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }],
    output: [{ id: 'out', address: '-', options: ['-metadata', `comment=${token}.${id}`, '-f', 'null'] }],
  };
}

/** Adds a process through `node`'s API, retrying while the cluster store is not open yet (503). */
export async function addProcess(node: Node, body: Record<string, unknown>): Promise<void> {
  await waitFor(async () => {
    const r = await node.request('POST', '/api/v3/process', { body });
    if (r.status !== 503 && r.status !== 200) throw new Error(`POST /api/v3/process on ${node.id}: ${r.status} ${r.text}`);
    return r.status === 200;
  }, { timeout: 30_000, interval: 250, what: `adding ${String(body.id)} on ${node.id}` });
}

/** `ppid`: the service that started it (`starterOf`). */
export interface Ffmpeg { pid: number; ppid: number; id: string }

/** The ffmpegs of this run (by the token in their command line), with the process id each carries. */
export function ffmpegs(token: string): Ffmpeg[] {
  const prefix = `comment=${token}.`;
  return ffmpegsWhere((argv) => argv.find((a) => a.startsWith(prefix))?.slice(prefix.length));
}

/**
 * Every ffmpeg on the machine whose command line `idOf` gives a process id for, with that id and
 * the node that started it (only ffmpeg itself: never the confinement's wrapper or init around it).
 */
export function ffmpegsWhere(idOf: (argv: string[]) => string | undefined): Ffmpeg[] {
  const out: Ffmpeg[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const id = idOf(readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0'));
      if (id === undefined || readFileSync(`/proc/${name}/comm`, 'utf8').trim() !== 'ffmpeg') continue;
      // the node that started it (above the confinement's wrapper and init, when there are)
      const ppid = starterOf(Number(name));
      if (ppid === undefined) continue;
      out.push({ pid: Number(name), ppid, id });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Process id → the node running it, when every id in `ids` runs exactly once on a live node. */
export function placementOf(token: string, nodes: Node[], ids: string[]): Map<string, string> | undefined {
  const byPid = new Map(nodes.map((n) => [n.app.child.pid, n.id]));
  const running = ffmpegs(token);
  const where = new Map<string, string>();
  for (const id of ids) {
    const copies = running.filter((f) => f.id === id);
    if (copies.length !== 1) return undefined;
    const node = byPid.get(copies[0]!.ppid);
    if (node === undefined) return undefined;
    where.set(id, node);
  }
  return where;
}

/** Per node, how many of the processes it runs. */
export function countByNode(where: Map<string, string>): Record<string, number> {
  const c: Record<string, number> = {};
  for (const n of where.values()) c[n] = (c[n] ?? 0) + 1;
  return c;
}

/**
 * Samples the process table every 100 ms and remembers every moment a process id had more
 * than one ffmpeg (the property the cluster guarantees: never two copies).
 */
export class DuplicateWatch {
  #timer: NodeJS.Timeout;
  samples = 0;
  duplicates: string[] = [];

  /** `of`: this run's token, or what finds this run's ffmpegs (e.g. `ffmpegsWhere`). */
  constructor(of: string | (() => Ffmpeg[])) {
    const find = typeof of === 'string' ? () => ffmpegs(of) : of;
    this.#timer = setInterval(() => {
      this.samples++;
      const seen = new Map<string, number>();
      for (const f of find()) seen.set(f.id, (seen.get(f.id) ?? 0) + 1);
      for (const [id, n] of seen) if (n > 1) this.duplicates.push(`${id} ×${n} at sample ${this.samples}`);
    }, 100);
  }

  stop(): void { clearInterval(this.#timer); }
}

/** Kills the ffmpegs of this run that are still around (e.g. a SIGKILLed node's), by pid. */
export function killLeftovers(token: string): void {
  for (const f of ffmpegs(token)) { try { process.kill(f.pid, 'SIGKILL'); } catch { /* gone */ } }
}
