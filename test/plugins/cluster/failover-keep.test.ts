import t from 'tap';
import { createTestApp } from '../../../testkit/index.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpegs, killLeftovers, markerToken, processBody } from './failover-kit.ts';
import { natsMissing, startNatsCluster } from './nats.ts';

const missing = natsMissing();
const TTL = 3;

/*
 * `on_quorum_loss: keep` reaches the node's ownership leases: with its nats-server paused, the
 * node's ffmpeg runs on past every lease deadline (with `stop` it ends at ttl/2: the partition
 * test), and it still runs, the same pid, once NATS is back and the lease is this node's again.
 */
t.test('on_quorum_loss keep: a node cut from NATS keeps its ffmpeg running', { skip: missing ?? false }, async (t) => {
  const token = markerToken();
  t.teardown(() => killLeftovers(token));
  const nats = await startNatsCluster(1);
  t.teardown(() => nats.stop());
  const kit = await createTestApp({ t, plugins: [{ name: 'cluster', config: {
    servers: [nats.servers[0]!.url], node_id: 'k', ttl_sec: TTL, announce_sec: 1, on_quorum_loss: 'keep',
  } }] });
  await kit.listen();
  await waitFor(async () => {
    const r = await kit.request('POST', '/api/v3/process', { body: processBody('kept', token) });
    return r.status === 200;
  }, { timeout: 30_000, what: 'the process added once the store is open' });
  const [first] = await waitFor(() => { const f = ffmpegs(token); return f.length === 1 ? f : undefined; }, { timeout: 30_000, what: 'its ffmpeg running here' });

  nats.servers[0]!.pause();
  const pausedAt = performance.now();
  await waitFor(async () => ((await kit.request('GET', '/api/v3/cluster')).body as { health: { nats: string } }).health.nats === 'disconnected',
    { timeout: 30_000, what: 'the node seeing NATS gone' });
  // past every deadline a lease renewed before the pause can have (ttl/2), and past the key's expiry
  await waitFor(() => performance.now() - pausedAt > TTL * 1000 + 500, { timeout: 30_000, what: 'ttl passing' });
  t.same(ffmpegs(token).map((f) => f.pid), [first!.pid], 'the same ffmpeg runs on without NATS');

  nats.servers[0]!.resume();
  await waitFor(async () => ((await kit.request('GET', '/api/v3/cluster')).body as { health: { nats: string }; assignments: unknown[] }).health.nats === 'connected',
    { timeout: 30_000, what: 'the node reconnected' });
  await waitFor(async () => ((await kit.request('GET', '/api/v3/cluster')).body as { assignments: { node_id: string }[] }).assignments.some((a) => a.node_id === 'k'),
    { timeout: 30_000, what: 'the assignment read again' });
  t.same(ffmpegs(token).map((f) => f.pid), [first!.pid], 'and after the heal (nobody else took it): still that one ffmpeg');
});
