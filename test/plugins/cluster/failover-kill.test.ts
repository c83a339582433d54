import t from 'tap';
import { waitFor } from '../../helpers/wait.ts';
import { addProcess, countByNode, ffmpegs, killLeftovers, markerToken, placementOf, processBody, startCluster } from './failover-kit.ts';
import { natsMissing } from './nats.ts';

const missing = natsMissing();

/*
 * Three nodes as OS processes, each on its own nats-server, six real ffmpegs. A node killed with
 * SIGKILL (a machine that dies: the service and its ffmpegs) and a node that leaves gracefully:
 * their processes run on the others, each exactly once.
 */
t.test('processes spread over three nodes and fail over when a node dies or leaves', { skip: missing ?? false }, async (t) => {
  const token = markerToken();
  t.teardown(() => killLeftovers(token));
  const cluster = await startCluster(t);
  const [a, b, c] = cluster.nodes as [typeof cluster.nodes[0], typeof cluster.nodes[0], typeof cluster.nodes[0]];
  const ids = Array.from({ length: 6 }, (_, i) => `restreamer-ui:ingest:${i}`);
  for (const id of ids) await addProcess(a, processBody(id, token));

  const spread = await waitFor(() => {
    const where = placementOf(token, cluster.nodes, ids);
    return where && Object.values(countByNode(where)).sort().join() === '2,2,2' ? where : undefined;
  }, { timeout: 30_000, what: 'six ffmpegs, two on each node' });
  t.pass('each process runs on exactly one node, two per node');

  // created on a, known everywhere
  for (const n of [b, c]) {
    const list = (await n.request('GET', '/api/v3/process')).body as { id: string }[];
    t.same(list.map((p) => p.id).filter((id) => ids.includes(id)).sort(), ids, `node ${n.id} lists the processes created on a`);
  }

  // b's machine dies: the service and its ffmpegs at once
  const onB = ffmpegs(token).filter((f) => f.ppid === b.app.child.pid);
  t.equal(onB.length, 2);
  b.app.child.kill('SIGKILL');
  // (its ffmpegs usually die with it already: the confinement's pid namespace)
  for (const f of onB) { try { process.kill(f.pid, 'SIGKILL'); } catch { /* gone already */ } }
  const alive = [a, c];
  const afterKill = await waitFor(() => {
    const where = placementOf(token, alive, ids);
    return where && Object.values(countByNode(where)).sort().join() === '3,3' ? where : undefined;
  }, { timeout: 20_000, what: 'the killed node\'s processes running on a and c' });
  const moved = ids.filter((id) => spread.get(id) === 'b');
  t.ok(moved.every((id) => afterKill.get(id) !== 'b'), `b's processes (${moved.join(', ')}) run elsewhere`);
  t.same(ids.filter((id) => spread.get(id) !== 'b' && afterKill.get(id) !== spread.get(id)), [], 'the others did not move');

  // a leaves gracefully: it stops its ffmpegs and releases their leases, c takes all six
  const onA = new Set(ffmpegs(token).filter((f) => f.ppid === a.app.child.pid).map((f) => f.pid));
  t.equal(onA.size, 3);
  const exited = new Promise((r) => a.app.child.once('exit', r));
  a.app.child.kill('SIGTERM');
  await exited;
  t.same(ffmpegs(token).filter((f) => onA.has(f.pid)), [], 'a stopped its ffmpegs on the way out');
  await waitFor(() => {
    const where = placementOf(token, [c], ids);
    return where && where.size === 6;
  }, { timeout: 20_000, what: 'all six on c' });
  t.pass('the departed node\'s processes run on the last node');
  t.equal(ffmpegs(token).length, 6, 'six ffmpegs in all, never more');
});
