import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type KV, type NatsConnection } from 'nats';
import { BUCKETS, bucketOptions } from '../../../plugins/cluster/connection.ts';
import { waitFor } from '../../helpers/wait.ts';

/** Why the cluster tests cannot run here, or null when nats-server is installed. */
export function natsMissing(): string | null {
  const r = spawnSync('nats-server', ['--version'], { encoding: 'utf8' });
  return r.error || r.status !== 0
    ? 'nats-server is not installed (scripts/ensure-test-deps.sh installs it with apt as root)'
    : null;
}

export interface NatsServer {
  name: string;
  /** `nats://127.0.0.1:<port>`: the client URL of this server only. */
  url: string;
  child: ChildProcess;
  /** Pauses the server (SIGSTOP): its clients and routes see silence, as in a partition. */
  pause(): void;
  resume(): void;
  /**
   * Stops the server as an operator does (SIGTERM, waits for the exit), runs `whileDown` (the
   * outage), and starts it again on the same config and JetStream store (its data kept); resolves
   * once JetStream answers there again.
   */
  restart(whileDown?: () => Promise<void>): Promise<void>;
}

export interface NatsCluster { servers: NatsServer[]; stop(): Promise<void> }

/** `n` distinct free loopback ports: all bound at once (port 0), then released. */
async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const s = createServer();
      servers.push(s);
      await new Promise<void>((res, rej) => { s.once('error', rej); s.listen(0, '127.0.0.1', res); });
    }
    return servers.map((s) => (s.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
}

function confOf(name: string, port: number, clusterPort: number, routes: number[], store: string): string {
  return [
    `server_name: ${name}`,
    `listen: "127.0.0.1:${port}"`,
    // a paused peer's routes are dropped after a few seconds, not the default minutes
    'ping_interval: "1s"', 'ping_max: 3',
    `jetstream { store_dir: ${JSON.stringify(store)}, max_memory_store: 64MB, max_file_store: 256MB }`,
    // one server alone runs JetStream standalone (a cluster block would wait for peers)
    ...routes.length === 0 ? [] : [`cluster { name: core_test, listen: "127.0.0.1:${clusterPort}", routes: [${routes.map((p) => `"nats-route://127.0.0.1:${p}"`).join(', ')}] }`],
  ].join('\n') + '\n';
}

/**
 * Starts `n` nats-servers clustered on loopback with JetStream (temp store dirs), and waits until
 * every one answers and JetStream has a meta leader (an account info request succeeds through
 * each server). `stop` kills them all (also paused ones) and removes the folder; pass it to
 * the test's teardown.
 */
export async function startNatsCluster(n: number): Promise<NatsCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'nats-cluster-'));
  const ports = await freePorts(2 * n);
  const clientPorts = ports.slice(0, n);
  const routePorts = ports.slice(n);
  const servers: NatsServer[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(servers.map((s) => new Promise<void>((res) => {
      if (s.child.exitCode !== null || s.child.signalCode !== null) return res();
      s.child.once('exit', () => res());
      s.child.kill('SIGKILL');
    })));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < n; i++) {
      const name = `n${i + 1}`;
      const conf = join(dir, `${name}.conf`);
      const routes = routePorts.filter((_, j) => j !== i);
      await writeFile(conf, confOf(name, clientPorts[i], routePorts[i], routes, join(dir, name)));
      const url = `nats://127.0.0.1:${clientPorts[i]}`;
      const server: NatsServer = {
        name, url, child: spawnNats(conf),
        pause: () => server.child.kill('SIGSTOP'),
        resume: () => server.child.kill('SIGCONT'),
        restart: async (whileDown) => {
          const old = server.child;
          if (old.exitCode === null && old.signalCode === null) await new Promise((r) => { old.once('exit', r); old.kill('SIGTERM'); });
          try {
            await whileDown?.();
          } finally {
            server.child = spawnNats(conf);
          }
          await waitFor(() => jetStreamReady(url), { timeout: 30_000, interval: 250, what: `JetStream on ${name} again` });
        },
      };
      servers.push(server);
    }
    for (const s of servers) await waitFor(() => jetStreamReady(s.url), { timeout: 30_000, interval: 250, what: `JetStream on ${s.name}` });
    // every server answering is not yet every peer known to the meta leader: a stream with n
    // replicas can be placed only then (else "no suitable peers for placement")
    if (n > 1) await waitFor(() => placeable(servers[0].url, n), { timeout: 30_000, interval: 250, what: `a stream with ${n} replicas` });
    return { servers, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function spawnNats(conf: string): ChildProcess {
  return spawn('nats-server', ['-c', conf], { stdio: ['ignore', 'ignore', 'ignore'] });
}

/** True once a stream with `replicas` replicas can be created (it is deleted again). */
async function placeable(url: string, replicas: number): Promise<boolean> {
  const nc = await connect({ servers: url, timeout: 1000, reconnect: false });
  try {
    const jsm = await nc.jetstreamManager({ timeout: 2000 });
    await jsm.streams.add({ name: 'ready_probe', subjects: ['ready_probe'], num_replicas: replicas });
    await jsm.streams.delete('ready_probe');
    return true;
  } finally {
    await nc.close();
  }
}

/** True when the server at `url` answers and serves JetStream requests (the meta leader exists). */
async function jetStreamReady(url: string): Promise<boolean> {
  const nc = await connect({ servers: url, timeout: 1000, reconnect: false });
  try {
    const jsm = await nc.jetstreamManager({ timeout: 1000 });
    await jsm.getAccountInfo();
    return true;
  } finally {
    await nc.close();
  }
}

/** A client connection to `url` and a KV bucket opened as the cluster plugin opens it; closed at teardown. */
export async function openBucket(t: { teardown(fn: () => unknown): void }, url: string, bucket: keyof typeof BUCKETS, ttlMs = 3000, replicas = 1): Promise<{ nc: NatsConnection; kv: KV }> {
  const nc = await connect({ servers: url });
  t.teardown(() => nc.close());
  const kv = await nc.jetstream().views.kv(BUCKETS[bucket], bucketOptions(bucket, ttlMs, replicas));
  return { nc, kv };
}
