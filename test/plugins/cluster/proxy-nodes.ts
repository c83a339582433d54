import { createServer } from 'node:net';
import { createTestApp, type TestApp } from '../../../testkit/index.ts';
import { waitFor } from '../../helpers/wait.ts';
import type { NatsCluster } from './nats.ts';

export const USER = 'admin';
export const PASS = 'pw-Cluster-123';

export interface ProxyNode { id: string; index: number; kit: TestApp; url: string; token: string }

/** A loopback port nobody listens on (bound, then released): connecting there is refused. */
export async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((res) => s.listen(0, '127.0.0.1', res));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

/**
 * A service node on its own nats-server: auth on with the same user and JWT secret on every node
 * (the proxy passes the caller's token on), memfs open for writes, and an IP block list of its
 * own (`10.66.<index>.0/24`) so a test can tell which node judged a client address. Node `index`
 * connects to nats server `index` (wrapping around when there are fewer servers). `more` adds
 * plugins and config sections (e.g. `rtmp`).
 */
export async function startNode(
  t: { teardown(fn: () => unknown): void }, nats: NatsCluster, id: string, index: number, cluster: Record<string, unknown> = {},
  more: { plugins?: string[]; config?: Record<string, unknown> } = {},
): Promise<ProxyNode> {
  const kit = await createTestApp({
    t,
    config: {
      api: {
        auth: { enable: true, username: USER, password: PASS, jwt: { secret: 'cluster-shared-secret' } },
        access: { http: { allow: [], block: [`10.66.${index}.0/24`] } },
      },
      storage: { memory: { auth: { enable: false } } },
      ...more.config,
    },
    plugins: ['auth', 'memfs', 'disk-fs', ...more.plugins ?? [], { name: 'cluster', config: { servers: [nats.servers[index % nats.servers.length]!.url], node_id: id, ttl_sec: 3, announce_sec: 1, replicas: 3, ...cluster } }],
  });
  const url = await kit.listen();
  const login = await kit.request('POST', '/api/login', { body: { username: USER, password: PASS } });
  if (login.status !== 200) throw new Error(`login on ${id}: ${login.status} ${login.text}`);
  return { id, index, kit, url, token: login.body.access_token };
}

const X264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10'];

/** A light HLS process into the memfs of the node that runs it. */
export function hlsProcess(id: string): Record<string, unknown> {
  return {
    id, autostart: true,
    input: [{ id: 'video', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }],
    output: [{
      id: 'hls', address: '{memfs}/{processid}.m3u8',
      options: [...X264, '-f', 'hls', '-hls_time', '1', '-hls_list_size', '4', '-hls_flags', 'delete_segments',
        '-hls_segment_filename', '{memfs}/{processid}_%03d.ts', '-method', 'PUT'],
    }],
  };
}

export type Assignments = Record<string, string>;

/** The assignments as `node` shows them, once they cover every one of `ids`. */
export async function assigned(node: ProxyNode, ids: string[]): Promise<Assignments> {
  return waitFor(async () => {
    const v = (await node.kit.request('GET', '/api/v3/cluster', { token: node.token })).body as { assignments: { process_id: string; node_id: string }[] };
    const m: Assignments = Object.fromEntries(v.assignments.map((a) => [a.process_id, a.node_id]));
    return ids.every((id) => m[id]) ? m : undefined;
  }, { timeout: 30_000, what: `assignments of ${ids.join(', ')}` });
}

/** Creates the processes through the API of `nodes[0]` (the engine writes them to the shared store); their owners. */
export async function createProcesses(nodes: ProxyNode[], ids: string[]): Promise<Assignments> {
  for (const id of ids) {
    const r = await nodes[0].kit.request('POST', '/api/v3/process', { token: nodes[0].token, body: hlsProcess(id) });
    if (r.status !== 200) throw new Error(`POST ${id}: ${r.status} ${r.text}`);
  }
  return assigned(nodes[0], ids);
}
