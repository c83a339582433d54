import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProcessStore } from '../../../plugins/cluster/process-store.ts';
import { createTestApp, type TestApp } from '../../../testkit/index.ts';
import { waitFor } from '../../helpers/wait.ts';
import { natsMissing, openBucket, startNatsCluster } from './nats.ts';

const missing = natsMissing();

const body = (id: string) => ({
  id, reference: 'api', autostart: false,
  input: [{ id: 'in', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }],
  output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
});

/*
 * The wiring through the real engine and its API (two in-process nodes on one nats-server, no
 * ffmpeg started): a node's db.json is imported at its first start in the cluster; every change
 * on one node (add, rename, metadata, delete) reaches the other; a process deleted while a node
 * was away is dropped from that node's engine when it comes back, never resurrected.
 */
t.test('API changes on one node reach the others through core_processes', { skip: missing ?? false }, async (t) => {
  const nats = await startNatsCluster(1);
  t.teardown(() => nats.stop());
  // a fresh folder per run: a's db.json must hold only what this run put there
  const dir = await mkdtemp(join(tmpdir(), 'cluster-engine-api-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const dbA = join(dir, 'a-db');
  const cluster = (id: string) => ({ name: 'cluster', config: { servers: [nats.servers[0]!.url], node_id: id, ttl_sec: 3, announce_sec: 1 } });
  const node = async (id: string, db?: string): Promise<TestApp> => {
    const kit = await createTestApp({ t, plugins: [cluster(id)], config: db ? { db: { dir: db } } : {} });
    await kit.listen();
    return kit;
  };
  const ids = async (kit: TestApp): Promise<string[]> => ((await kit.request('GET', '/api/v3/process')).body as { id: string }[]).map((p) => p.id).sort();
  const { kv } = await openBucket(t, nats.servers[0]!.url, 'processes');
  const store = new ProcessStore(kv);

  // a single node with a process in its db.json switches into the cluster
  const single = await createTestApp({ t, config: { db: { dir: dbA } } });
  t.equal((await single.request('POST', '/api/v3/process', { body: body('legacy') })).status, 200);
  await single.close();
  let a = await node('a', dbA);
  await waitFor(() => store.get('legacy'), { timeout: 20_000, what: 'legacy imported into core_processes' });
  t.equal((await store.get('legacy'))!.process.reference, 'api', 'imported in its stored form');

  const b = await node('b');
  await waitFor(async () => (await ids(b)).includes('legacy'), { timeout: 20_000, what: 'b listing a\'s imported process' });
  t.pass('a process of a\'s db.json is listed on b');

  // rename on b
  t.equal((await b.request('PUT', '/api/v3/process/legacy', { body: body('renamed') })).status, 200);
  await waitFor(async () => (await ids(a)).join() === 'renamed', { timeout: 20_000, what: 'a following the rename' });
  t.equal(await store.get('legacy'), undefined, 'the old id is gone from the store');
  // metadata on a
  t.equal((await a.request('PUT', '/api/v3/process/renamed/metadata/note', { body: { by: 'a' } })).status, 200);
  await waitFor(async () => {
    const r = await b.request('GET', '/api/v3/process/renamed/metadata/note');
    return r.status === 200 && (r.body as { by?: string }).by === 'a';
  }, { timeout: 20_000, what: 'b showing a\'s metadata' });
  t.pass('metadata set on a is read on b');
  // an order change on a, seen on b (no node runs it: order alone does not start anything here)
  t.equal((await a.request('PUT', '/api/v3/process/renamed/command', { body: { command: 'start' } })).status, 200);
  await waitFor(async () => (await store.get('renamed'))?.process.order === 'start', { what: 'the order in the store' });
  // delete on b
  t.equal((await b.request('DELETE', '/api/v3/process/renamed')).status, 200);
  await waitFor(async () => (await ids(a)).length === 0, { timeout: 20_000, what: 'a dropping the deleted process' });
  t.pass('a delete on b removes it on a');

  // a leaves; meanwhile b deletes a process a had; a comes back with its old db.json
  t.equal((await b.request('POST', '/api/v3/process', { body: body('gone while away') })).status, 200);
  await waitFor(async () => (await ids(a)).includes('gone while away'), { timeout: 20_000, what: 'a listing b\'s new process' });
  await a.close();
  t.equal((await b.request('DELETE', `/api/v3/process/${encodeURIComponent('gone while away')}`)).status, 200);
  a = await node('a', dbA);
  await waitFor(async () => (await ids(a)).length === 0 && (await ids(b)).length === 0, { timeout: 20_000, what: 'a dropping what was deleted while it was away' });
  t.equal(await store.get('gone while away'), undefined, 'and the cluster did not get it back (no second import)');
});
