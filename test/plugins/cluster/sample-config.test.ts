import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deepMerge } from '../../../core/config/schema-walk.ts';
import { createTestApp, type TestApp } from '../../../testkit/index.ts';
import { waitFor } from '../../helpers/wait.ts';
import { natsMissing, startNatsCluster } from './nats.ts';

const DIR = fileURLToPath(new URL('../../../sample-config/cluster-3-nodes/', import.meta.url));
const missing = natsMissing();

interface Sample { plugins: (string | { name: string; config: Record<string, unknown> })[] }

/** A node's sample with its folders in the test's temp folder, a free port and `servers` replaced. */
async function local(node: string, dir: string, servers: string[]): Promise<Record<string, unknown>> {
  const s = JSON.parse(await readFile(join(DIR, `node-${node}.json`), 'utf8')) as Sample & Record<string, unknown>;
  const plugins = s.plugins.map((p) => typeof p === 'string' || p.name !== 'cluster' ? p
    : { name: 'cluster', config: { ...p.config, servers, api_address: undefined, ttl_sec: 3, announce_sec: 1 } });
  return deepMerge({ ...s, plugins }, { address: '127.0.0.1:0', db: { dir: join(dir, node, 'db') }, storage: { disk: { dir: join(dir, node, 'disk') } } });
}

t.test('the three nats-server confs are valid', { skip: missing ?? false }, async (t) => {
  for (const n of ['a', 'b', 'c']) {
    const r = spawnSync('nats-server', ['-c', join(DIR, `nats-${n}.conf`), '-t'], { encoding: 'utf8', cwd: DIR });
    t.equal(r.status, 0, `nats-${n}.conf: ${r.stderr.trim() || r.stdout.trim()}`);
  }
});

t.test('the three node configs form one cluster (on test-started nats-servers)', { skip: missing ?? false }, async (t) => {
  const nats = await startNatsCluster(3);
  t.teardown(() => nats.stop());
  const kits: TestApp[] = [];
  for (const [i, n] of ['a', 'b', 'c'].entries()) {
    const kit = await createTestApp({ t, config: await local(n, t.testdirName, [nats.servers[i].url]) });
    await kit.listen();
    kits.push(kit);
  }
  const leader = await waitFor(async () => {
    const views = await Promise.all(kits.map(async (k) => (await k.request('GET', '/api/v3/cluster')).body));
    const ok = views.every((v) => v.nodes.length === 3 && v.leader && v.leader === views[0].leader);
    return ok ? views[0].leader as string : undefined;
  }, { timeout: 30_000, what: 'node-a, node-b, node-c agreeing on a leader' });
  t.match(leader, /^node-[abc]$/);
});
