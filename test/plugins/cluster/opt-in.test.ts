import '../../../app/install.ts'; // this service's built-ins, installed into the core
import t from 'tap';
import { loadPlugins, starBuiltins } from '../../../core/kernel/loader.ts';
import { createTestApp } from '../../../testkit/index.ts';
import { isBootError } from '../../../sdk/index.ts';

t.test('"*" leaves the cluster plugin out; naming it loads it with its entry settings', async (t) => {
  t.notOk(starBuiltins().includes('cluster'), 'not among the built-ins "*" expands to');
  const star = await loadPlugins(['*']);
  t.notOk(star.some((p) => p.def.name === 'cluster'), 'a default config never joins a cluster');
  t.ok(star.some((p) => p.def.name === 'memfs'), 'the other built-ins still load');
  const named = await loadPlugins(['*', { name: 'cluster', config: { servers: ['nats://127.0.0.1:1'] } }]);
  const cluster = named.find((p) => p.def.name === 'cluster');
  t.ok(cluster, 'loaded when named');
  t.same(cluster?.entryConfig, { servers: ['nats://127.0.0.1:1'] });
});

t.test('the entry settings are validated by the plugin (schema and cross-field rule)', async (t) => {
  const bad = async (config: Record<string, unknown>): Promise<string> => {
    try {
      await createTestApp({ t, plugins: [{ name: 'cluster', config }] });
    } catch (err) {
      return isBootError(err) || err instanceof Error ? (err as Error).message : String(err);
    }
    throw new Error('booted with a bad cluster config');
  };
  t.match(await bad({ announce_sec: 2, ttl_sec: 3 }), /ttl_sec.*twice announce_sec/);
  t.match(await bad({ servers: [] }), /servers/);
  t.match(await bad({ node_id: 'a.b' }), /node_id/);
});

t.test('mounted without a reachable NATS, the route answers and reports disconnected', async (t) => {
  // port 1 on loopback: nothing listens there, every connect fails fast
  const kit = await createTestApp({ t, plugins: [{ name: 'cluster', config: { servers: ['nats://127.0.0.1:1'], node_id: 'solo' } }] });
  await kit.listen();
  const res = await kit.request('GET', '/api/v3/cluster');
  t.equal(res.status, 200);
  t.same(res.body, { node_id: 'solo', leader: null, nodes: [], assignments: [], health: { nats: 'disconnected', last_error: res.body.health.last_error } });
});
