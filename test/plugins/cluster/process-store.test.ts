import t from 'tap';
import { isConflict } from '../../../plugins/cluster/errors.ts';
import { importMarker, importOnce } from '../../../plugins/cluster/import.ts';
import { decodeId, encodeId, idOfKey, processKey } from '../../../plugins/cluster/keys.ts';
import { ProcessStore, type ProcessChange, type SharedProcess } from '../../../plugins/cluster/process-store.ts';
import { waitFor } from '../../helpers/wait.ts';
import { natsMissing, openBucket, startNatsCluster } from './nats.ts';

const missing = natsMissing();

const proc = (id: string, extra: Partial<SharedProcess> = {}): SharedProcess =>
  ({ id, order: 'stop', config: { id, input: [], output: [] }, metadata: null, updated_at: 1, ...extra });

t.test('keys: ids NATS refuses round-trip through valid keys', async (t) => {
  const ids = ['restreamer-ui:ingest:5a1e0c43-6d2f-4c1a-9b8e-1f2a3b4c5d6e', 'a.b.c', '*', '>', 'a b', ' lead', 'trail.',
    'Ünïcödé ✓ 日本語 😀', 'p.x', 'import.a', '/', '=', '-', '_', 'x'.repeat(300)];
  for (const id of ids) {
    const key = processKey(id);
    t.match(key, /^p\.[A-Za-z0-9_-]+$/, `${JSON.stringify(id.slice(0, 20))}: only key-safe characters, one token after p.`);
    t.equal(idOfKey(key), id, 'decoded back');
    t.equal(decodeId(encodeId(id)), id);
  }
  t.equal(new Set(ids.map(processKey)).size, ids.length, 'distinct ids, distinct keys');
  t.equal(idOfKey(importMarker('a')), undefined, 'a marker key is not a process key');
  t.throws(() => processKey(''), { errorCode: 'CLUSTER_BAD_ID' } as unknown as Error);
});

t.test('process store on a real nats-server', { skip: missing ?? false }, async (t) => {
  const nats = await startNatsCluster(1);
  t.teardown(() => nats.stop());
  const url = nats.servers[0].url;
  const { kv } = await openBucket(t, url, 'processes');
  const { kv: kv2 } = await openBucket(t, url, 'processes');
  const a = new ProcessStore(kv);
  const b = new ProcessStore(kv2);
  t.teardown(() => { a.stop(); b.stop(); });

  t.test('create, compare-and-swap update, delete; lost races are typed conflicts', async (t) => {
    const id = 'restreamer-ui:ingest:1 *>.';
    const rev = await a.create(proc(id));
    await t.rejects(b.create(proc(id)), { errorCode: 'CLUSTER_CONFLICT', status: 409 } as unknown as Error, 'a second create of the id conflicts');
    const read = await b.get(id);
    t.same(read?.process, proc(id));
    t.equal(read?.revision, rev);
    const rev2 = await a.update(proc(id, { order: 'start' }), rev);
    const lost = await b.update(proc(id, { order: 'stop' }), rev).catch((err) => err);
    t.ok(isConflict(lost), 'an update at a stale revision conflicts');
    t.equal((await a.get(id))?.process.order, 'start', 'the winner\'s write stands');
    await t.rejects(b.delete(id, rev), { errorCode: 'CLUSTER_CONFLICT' } as unknown as Error, 'a delete at a stale revision conflicts');
    await b.delete(id, rev2);
    t.equal(await a.get(id), undefined);
    t.ok(await a.create(proc(id)), 'a deleted id can be created again');
    await a.delete(id);
  });

  t.test('the watcher keeps a view and reports add, update, delete', async (t) => {
    await a.create(proc('before'));
    const seen: ProcessChange[] = [];
    await b.watch((c) => seen.push(c));
    t.same(b.list().map((v) => v.process.id), ['before'], 'current values are in the view once watch resolves');
    const rev = await a.create(proc('x:y'));
    await a.update(proc('x:y', { metadata: { k: 1 } }), rev);
    await a.delete('before');
    await waitFor(() => seen.length >= 4, { what: 'four changes' });
    t.same(seen.map((c) => `${c.type}:${c.type === 'delete' ? c.id : c.process.id}`), ['add:before', 'add:x:y', 'update:x:y', 'delete:before']);
    t.same(b.find('x:y')?.process.metadata, { k: 1 });
    t.equal(b.find('before'), undefined);
    // a restarted watcher (as after a reconnect) reports only what changed while it was off
    b.stop();
    await a.delete('x:y');
    await a.create(proc('z'));
    seen.length = 0;
    await b.watch((c) => seen.push(c));
    t.same(seen.map((c) => `${c.type}:${c.type === 'delete' ? c.id : c.process.id}`).sort(), ['add:z', 'delete:x:y']);
    b.stop();
    await a.delete('z');
  });

  t.test('importOnce: once per node, concurrent imports store each id once, existing ids kept', async (t) => {
    await a.create(proc('exists', { order: 'start' }));
    const db = [proc('exists'), proc('one'), proc('two:2')];
    // two nodes switching into the cluster at the same time with overlapping processes
    const [r1, r2] = await Promise.all([importOnce(kv, a, 'node-1', db), importOnce(kv2, b, 'node-2', db)]);
    t.same([...r1.added, ...r2.added].sort(), ['one', 'two:2'], 'each new id added by exactly one node');
    t.same(r1.kept.concat(r2.kept).filter((id) => id === 'exists'), ['exists', 'exists'], 'the existing id is kept by both');
    t.equal((await a.get('exists'))?.process.order, 'start', 'not overwritten');
    // the same node again (a restart, or a racing second call): nothing more
    await a.delete('one');
    const [again, racing] = await Promise.all([importOnce(kv, a, 'node-1', db), importOnce(kv2, b, 'node-1', db)]);
    t.same([again.status, racing.status], ['done', 'done']);
    t.equal(await a.get('one'), undefined, 'a process deleted in the cluster is not resurrected');
    // a fresh node racing itself: one call imports, the other finds the claim
    const rs = await Promise.all([importOnce(kv, a, 'node-3', [proc('three')]), importOnce(kv2, b, 'node-3', [proc('three')])]);
    t.same(rs.map((r) => r.status).sort(), ['done', 'imported']);
    t.equal((await kv.get(importMarker('node-3')))?.json<{ state: string }>().state, 'done');
  });
});
