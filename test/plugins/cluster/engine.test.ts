import t from 'tap';
import { isConflict } from '../../../plugins/cluster/errors.ts';
import { ProcessStore } from '../../../plugins/cluster/process-store.ts';
import { Replica, toRecord, toShared } from '../../../plugins/cluster/replica.ts';
import type { ProcessRecord, ProcessReplicaService, ProcessReplication, ProcessWrite } from '../../../sdk/index.ts';
import { waitFor } from '../../helpers/wait.ts';
import { natsMissing, openBucket, startNatsCluster } from './nats.ts';

const missing = natsMissing();
const log = { info: () => {}, warn: () => {} };

const rec = (id: string, extra: Partial<ProcessRecord> = {}): ProcessRecord =>
  ({ id, reference: 'ref', order: 'stop', config: { id, reference: 'ref', input: [], output: [] }, metadata: null, created_at: 5, updated_at: 6, ...extra });

/**
 * The engine's side as the contract describes it, recording what the replica asks of it (the
 * core's engine is tested in core/process; here the wiring's own decisions are).
 */
class RecordingEngine implements ProcessReplicaService {
  replication: ProcessReplication | undefined;
  have = new Map<string, ProcessRecord>();
  calls: string[] = [];
  attach(r: ProcessReplication): void { this.replication = r; }
  records(): ProcessRecord[] { return [...this.have.values()]; }
  async apply(r: ProcessRecord): Promise<void> { this.calls.push(`apply ${r.id} ${r.order}`); this.have.set(r.id, r); }
  async drop(id: string): Promise<void> { this.calls.push(`drop ${id}`); this.have.delete(id); }
  async rerun(id: string): Promise<void> { this.calls.push(`rerun ${id}`); }
  /** An API change: through the replication first, as the engine does before acknowledging. */
  async write(c: ProcessWrite): Promise<void> { await this.replication!.write(c); }
}

t.test('records map to shared values and back; old values get defaults', async (t) => {
  const r = rec('x', { metadata: { a: 1 } });
  t.same(toRecord(toShared(r)), r);
  const made = rec('m', { maker: 'iam:alice' });
  t.same(toRecord(toShared(made)), made, 'its maker travels (asked again where it runs)');
  const since = rec('s', { maker: 'iam:alice', maker_since: 1_700_000_000 });
  t.same(toRecord(toShared(since)), since, 'and since when, when a plugin made it for her');
  t.same(toRecord({ id: 'y', order: 'start', config: { reference: 'cfg' }, metadata: null, updated_at: 9 }),
    { id: 'y', reference: 'cfg', order: 'start', config: { reference: 'cfg' }, metadata: null, created_at: 9, updated_at: 9 });
});

t.test('the engine wiring on a real nats-server', { skip: missing ?? false }, async (t) => {
  const nats = await startNatsCluster(1);
  t.teardown(() => nats.stop());
  const url = nats.servers[0].url;
  const { kv } = await openBucket(t, url, 'processes');
  const { kv: kvOther } = await openBucket(t, url, 'processes');
  const other = new ProcessStore(kvOther);

  t.test('writes are compare-and-swaps; a lost race is a 409 and changes nothing', async (t) => {
    const engine = new RecordingEngine();
    const owned = new Set(['mine']);
    const replica = new Replica(engine, { node: 'a', log, runs: (id) => owned.has(id) });
    t.ok(engine.replication!.runs('mine') && !engine.replication!.runs('theirs'), 'runs is the owner agent\'s answer');
    await t.rejects(engine.write({ kind: 'put', record: rec('early') }), { errorCode: 'CLUSTER_UNAVAILABLE', status: 503 } as unknown as Error, 'before the store is open: 503');
    // no watcher here: the replica must name its own last revision for a second write
    const store = new ProcessStore(kv);
    await replica.prepare(kv, store);
    await engine.write({ kind: 'put', record: rec('p1') });
    await engine.write({ kind: 'put', record: rec('p1', { order: 'start' }) });
    t.equal((await other.get('p1'))?.process.order, 'start', 'create, then update with the revision it wrote');
    const seen = (await other.get('p1'))!;
    await other.update({ ...seen.process, metadata: { by: 'other node' } }, seen.revision);
    const err = await engine.write({ kind: 'put', record: rec('p1', { order: 'stop' }) }).catch((e: unknown) => e);
    t.ok(isConflict(err), 'a write over another node\'s change is CLUSTER_CONFLICT');
    t.match(err, { status: 409 });
    t.same((await other.get('p1'))?.process.metadata, { by: 'other node' }, 'the other node\'s change stands');
    await other.create(toShared(rec('taken')));
    t.ok(isConflict(await engine.write({ kind: 'put', record: rec('taken') }).catch((e: unknown) => e)), 'a new id that exists: conflict');

    await engine.write({ kind: 'put', record: rec('p2') });
    await engine.write({ kind: 'put', record: rec('p2 renamed'), previousId: 'p2' });
    t.ok(await other.get('p2 renamed'), 'a rename creates the new id');
    t.equal(await other.get('p2'), undefined, 'and deletes the old one');
    await engine.write({ kind: 'delete', id: 'p2 renamed' });
    t.equal(await other.get('p2 renamed'), undefined, 'a delete');
    await engine.write({ kind: 'put', record: rec('p2 renamed') });
    t.ok(await other.get('p2 renamed'), 'a deleted id can be created again');
    // an add never overwrites, even where this node's view knows a revision to update
    await engine.write({ kind: 'put', record: rec('p4') });
    const added = await engine.write({ kind: 'put', record: rec('p4', { order: 'start' }), created: true }).catch((e: unknown) => e);
    t.ok(isConflict(added), 'an add of an id the store has: conflict');
    t.equal((await other.get('p4'))?.process.order, 'stop', 'the stored process stands');
    for (const id of ['p1', 'taken', 'p2 renamed', 'p4']) await other.delete(id);
  });

  t.test('the watcher feeds every change into the engine, in order', async (t) => {
    const engine = new RecordingEngine();
    const replica = new Replica(engine, { node: 'b', log, runs: () => false });
    const store = new ProcessStore(kv);
    t.teardown(() => store.stop());
    await replica.prepare(kv, store);
    await store.watch((c) => replica.change(c));
    replica.ready();
    // one change at a time: the bucket keeps one revision per key (history 1), so a watcher that
    // lags behind a burst gets the newest value of a key, not each revision on the way
    await other.create(toShared(rec('w1')));
    await waitFor(() => engine.calls.includes('apply w1 stop'), { what: 'the add reaching the engine' });
    const w1 = (await other.get('w1'))!;
    await other.update({ ...w1.process, order: 'start' }, w1.revision);
    await waitFor(() => engine.calls.includes('apply w1 start'), { what: 'the update reaching the engine' });
    await other.delete('w1');
    await waitFor(() => engine.calls.includes('drop w1'), { what: 'the delete reaching the engine' });
    await replica.settled();
    t.same(engine.calls, ['apply w1 stop', 'apply w1 start', 'drop w1']);
    // its own write comes back too (the engine treats the unchanged record as a no-op)
    await engine.write({ kind: 'put', record: rec('w2') });
    await waitFor(() => engine.calls.includes('apply w2 stop'), { what: 'the echo of its own write' });
    // a second write right after the first names the revision the first wrote, echo or not
    await engine.write({ kind: 'put', record: rec('w2', { order: 'start' }) });
    await engine.write({ kind: 'put', record: rec('w2', { order: 'stop' }) });
    await engine.write({ kind: 'delete', id: 'w2' });
    t.pass('consecutive writes of one node never conflict with themselves');
  });

  t.test('first start: the node\'s processes are imported once; later, what the cluster deleted is dropped', async (t) => {
    const engine = new RecordingEngine();
    engine.have.set('i1', rec('i1', { order: 'start' }));
    engine.have.set('i2', rec('i2'));
    const first = new Replica(engine, { node: 'c', log, runs: () => false });
    await first.prepare(kv, new ProcessStore(kv));
    t.same((await other.get('i1'))?.process, toShared(rec('i1', { order: 'start' })), 'imported as the engine stores it');
    t.ok(await other.get('i2'));
    await other.delete('i2');
    // the node restarts: its db.json still has i2 (deleted in the cluster meanwhile)
    const restarted = new RecordingEngine();
    restarted.have = new Map(engine.have);
    const replica = new Replica(restarted, { node: 'c', log, runs: () => false });
    const store = new ProcessStore(kv);
    t.teardown(() => store.stop());
    await replica.prepare(kv, store);
    t.equal(await other.get('i2'), undefined, 'not imported twice (never resurrected)');
    await store.watch((c) => replica.change(c));
    replica.ready();
    await replica.settled();
    t.same([...restarted.have.keys()], ['i1'], 'the process the cluster deleted is dropped here');
    t.ok(restarted.calls.includes('drop i2'));
    await other.delete('i1');
  });
});
