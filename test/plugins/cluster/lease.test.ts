import t from 'tap';
import { LeaderLease, LEADER_KEY } from '../../../plugins/cluster/lease.ts';
import { natsMissing, openBucket, startNatsCluster } from './nats.ts';

const missing = natsMissing();

t.test('leader lease: take, renew, adopt its own unanswered write, lose to another', { skip: missing ?? false }, async (t) => {
  const nats = await startNatsCluster(1);
  t.teardown(() => nats.stop());
  const { kv } = await openBucket(t, nats.servers[0].url, 'leader', 60_000);
  const a = new LeaderLease('a', 60_000);
  const b = new LeaderLease('b', 60_000);
  t.equal(await a.tick(kv), 'took');
  t.equal(await b.tick(kv), undefined, 'the key is held: b does not lead');
  t.equal(b.leader(), 'a', 'b knows who leads');
  t.equal(await a.tick(kv), undefined, 'a renewal is no change');
  t.ok(a.isLeader());

  // a's renewal landed but its answer was lost: the key holds a's id at a newer revision
  const e = await kv.get(LEADER_KEY);
  await kv.update(LEADER_KEY, JSON.stringify({ id: 'a', at: 'lost answer' }), e!.revision);
  t.equal(await a.tick(kv), undefined, 'refused, re-read, adopted: still the leader');
  t.ok(a.isLeader());
  t.equal(await a.tick(kv), undefined, 'and the next renewal lands at the adopted revision');
  t.equal((await kv.get(LEADER_KEY))!.json<{ id: string }>().id, 'a');

  // another node's write (it took an expired key): a loses at once
  const cur = await kv.get(LEADER_KEY);
  await kv.update(LEADER_KEY, JSON.stringify({ id: 'b', at: 'now' }), cur!.revision);
  t.equal(await a.tick(kv), 'lost');
  t.notOk(a.isLeader());
  t.equal(a.leader(), 'b');
});

/*
 * Found by the cluster journey (test/journey/cluster.test.ts): a node that does not lead forgot
 * the leader while each tick re-read it, so `GET /api/v3/cluster` answered `leader: null` now and
 * then although the leader held its lease all along.
 */
t.test('a node that does not lead knows the leader all through its tick', { skip: missing ?? false }, async (t) => {
  const nats = await startNatsCluster(1);
  t.teardown(() => nats.stop());
  const { kv } = await openBucket(t, nats.servers[0].url, 'leader', 60_000);
  const a = new LeaderLease('a', 60_000);
  const b = new LeaderLease('b', 60_000);
  t.equal(await a.tick(kv), 'took');
  await b.tick(kv);
  t.equal(b.leader(), 'a');
  // the same bucket, noting what b answers at each step of its next tick (a view asked meanwhile)
  const seen: (string | null)[] = [];
  const watched = new Proxy(kv, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => { seen.push(b.leader()); return (v as (...a: unknown[]) => unknown).apply(target, args); };
    },
  });
  await b.tick(watched);
  seen.push(b.leader());
  t.ok(seen.length >= 2, `b asked the bucket during its tick (${seen.length - 1} calls)`);
  t.same(seen, seen.map(() => 'a'), 'b answers a as the leader before, during and after its tick');
});
