import type { TestLike, TestResponse } from '../helpers/app.ts';
import { ffmpegsWhere, type Ffmpeg } from '../plugins/cluster/failover-kit.ts';
import { startNatsCluster, type NatsCluster } from '../plugins/cluster/nats.ts';
import { startJourney, waitFor, type Journey } from './kit.ts';

/*
 * The cluster journey's services: every node is the journey's service (the CLI, every built-in
 * plugin on as `startJourney` turns them on, auth and tokens, the same users and JWT secret) with
 * the cluster plugin added, all on one real nats-server (JetStream on disk, so a restart of the
 * server keeps the buckets). A node is stopped, killed and started again as an operator does it.
 */

export interface ClusterNode { id: string; j: Journey; /** False once stopped or killed, true again after `start`. */ up: boolean }

export interface ClusterJourney {
  nats: NatsCluster;
  nodes: ClusterNode[];
  node(id: string): ClusterNode;
  /** The nodes that run now. */
  up(): ClusterNode[];
}

/** What `GET /api/v3/cluster` answers (plugins/cluster/schema.ts, `ClusterView`). */
export interface ClusterView {
  node_id: string;
  leader: string | null;
  nodes: { id: string; api_address: string; streams?: string[] }[];
  assignments: { process_id: string; node_id: string }[];
  health: { nats: 'connected' | 'disconnected'; last_error: string | null };
}

/** The cluster plugin's entry of a node: its own id, the one nats-server, short timers (as the cluster tests use). */
export const clusterEntry = (url: string, id: string) => ({ name: 'cluster', config: { servers: [url], node_id: id, ttl_sec: 4, announce_sec: 1 } });

/** One nats-server and a node per id, started in turn; every child is stopped at teardown. */
export async function startClusterJourney(t: TestLike, ids: string[]): Promise<ClusterJourney> {
  const nats = await startNatsCluster(1);
  t.teardown(() => nats.stop());
  const nodes: ClusterNode[] = [];
  for (const id of ids) {
    const j = await startJourney(t, () => ({ plugins: ['*', clusterEntry(nats.servers[0]!.url, id)] }));
    nodes.push({ id, j, up: true });
  }
  const cj: ClusterJourney = {
    nats, nodes,
    node: (id) => nodes.find((n) => n.id === id)!,
    up: () => nodes.filter((n) => n.up),
  };
  await agreed(cj);
  return cj;
}

/** `GET /api/v3/cluster` on `n`. */
export async function view(n: ClusterNode): Promise<{ res: TestResponse; body: ClusterView }> {
  const res = await n.j.run.req('GET', '/api/v3/cluster');
  return { res, body: res.body as ClusterView };
}

/**
 * Waits until every running node is connected to NATS, sees exactly the running nodes and the
 * same leader; answers that leader.
 */
export async function agreed(cj: ClusterJourney, timeout = 60_000): Promise<string> {
  const want = cj.up().map((n) => n.id).sort().join();
  return waitFor(async () => {
    const views = await Promise.all(cj.up().map(async (n) => (await view(n)).body));
    const same = views.every((v) => v.health?.nats === 'connected' && v.nodes.map((x) => x.id).sort().join() === want
      && v.leader !== null && v.leader === views[0]!.leader);
    return same ? views[0]!.leader! : undefined;
  }, { timeout, interval: 250, what: `the nodes ${want} agreeing on a leader` });
}

/** SIGTERM: the node leaves as a service stopped by systemd does; answers its exit code. */
export async function stopNode(n: ClusterNode): Promise<number | null> {
  n.up = false;
  return n.j.run.stop();
}

/** SIGKILL: the node's service dies at once (its confined ffmpegs with it). */
export async function killNode(n: ClusterNode): Promise<void> {
  n.up = false;
  await n.j.run.kill();
}

/** Starts a stopped or killed node again on its config and db (it rejoins the cluster). */
export async function startNode(n: ClusterNode): Promise<void> {
  await n.j.restart();
  n.up = true;
}

/**
 * The ffmpegs of a journey's processes: `markers` maps each process id to a text only its own
 * ffmpeg's command line holds (e.g. the channel's HLS playlist in the ingest's tee).
 */
export function journeyFfmpegs(markers: Record<string, string>): Ffmpeg[] {
  const entries = Object.entries(markers);
  return ffmpegsWhere((argv) => entries.find(([, text]) => argv.some((a) => a.includes(text)))?.[0]);
}

/**
 * The one node running all of `markers`' processes, when each runs exactly once, all on the same
 * running node, and no other ffmpeg of them exists anywhere (an orphan of a killed node included).
 */
export function runningOn(cj: ClusterJourney, markers: Record<string, string>): ClusterNode | undefined {
  const found = journeyFfmpegs(markers);
  if (found.length !== Object.keys(markers).length) return undefined;
  const owners = new Set(found.map((f) => f.ppid));
  if (owners.size !== 1 || new Set(found.map((f) => f.id)).size !== found.length) return undefined;
  return cj.up().find((n) => n.j.run.child.pid === found[0]!.ppid);
}

/** Waits until the processes of `markers` run once each, together on one running node; answers it. */
export function channelNode(cj: ClusterJourney, markers: Record<string, string>, what: string, timeout = 40_000): Promise<ClusterNode> {
  return waitFor(() => runningOn(cj, markers), { timeout, interval: 200, what });
}
