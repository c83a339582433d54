import t from 'tap';
import { Ownership, type LostReason } from '../../../plugins/cluster/ownership.ts';
import { processKey } from '../../../plugins/cluster/keys.ts';
import { waitFor } from '../../helpers/wait.ts';
import { natsMissing, openBucket, startNatsCluster } from './nats.ts';

const missing = natsMissing();
// generous: renewals (every ttl/6) must keep up on a loaded machine for "no lease lost" to hold
const TTL = 6000;
/** Wall-clock milliseconds with monotonic resolution: comparable across the owners of this process. */
const stamp = (): number => performance.timeOrigin + performance.now();

t.test('ownership leases on three clustered nats-servers', { skip: missing ?? false }, async (t) => {
  const nats = await startNatsCluster(3);
  t.teardown(() => nats.stop());
  const [s1, s2] = nats.servers;
  const { kv: kv1 } = await openBucket(t, s1.url, 'owners', TTL, 3);
  const { kv: kv2 } = await openBucket(t, s2.url, 'owners', TTL, 3);
  const lost: { node: string; id: string; reason: LostReason; at: number }[] = [];
  const owner = (kv: typeof kv1, node: string): Ownership => {
    const o = new Ownership(kv, { node, ttlMs: TTL, onLost: (id, reason) => lost.push({ node, id, reason, at: stamp() }) });
    t.teardown(() => o.close());
    o.start();
    return o;
  };
  const a = owner(kv1, 'a');
  const b = owner(kv2, 'b');

  t.test('two owners race for one id: exactly one wins, renewals keep it, release frees it', async (t) => {
    const id = 'restreamer-ui:ingest:race';
    const won = await Promise.all([a.acquire(id), b.acquire(id)]);
    t.equal(won.filter(Boolean).length, 1, 'exactly one acquire succeeds');
    const [winner, loser] = won[0] ? [a, b] : [b, a];
    t.ok(winner.holds(id));
    t.notOk(loser.holds(id));
    // outlive a ttl by renewals: the loser still cannot take it (waited on the key's revision, not a clock)
    const firstRev = (await kv1.get(processKey(id)))!.revision;
    await waitFor(async () => (await kv1.get(processKey(id)))!.revision >= firstRev + 7, { what: 'seven renewals (beyond a ttl)' });
    t.notOk(await loser.acquire(id), 'a renewed lease is not taken');
    t.ok(winner.holds(id));
    await winner.release(id);
    t.ok(await loser.acquire(id), 'a released lease is free at once');
    await loser.release(id);
    t.same(lost, [], 'no lease was lost on the way');
  });

  t.test('a renewal refused by compare-and-swap loses the lease at once', async (t) => {
    const id = 'cas';
    t.ok(await a.acquire(id));
    await kv2.put(processKey(id), JSON.stringify({ node: 'intruder' }));
    await waitFor(() => lost.some((l) => l.id === id), { what: 'onLost after the key changed' });
    t.same(lost.filter((l) => l.id === id).map((l) => [l.node, l.reason]), [['a', 'taken']]);
    t.notOk(a.holds(id));
    await kv2.delete(processKey(id));
  });

  t.test('a refused renewal over this node\'s own later write is adopted, not lost', async (t) => {
    const id = 'adopt';
    t.ok(await a.acquire(id));
    // a renewal that landed but whose answer never came back: the key is a's, at a newer revision
    const e = await kv2.get(processKey(id));
    await kv2.update(processKey(id), JSON.stringify({ node: 'a', at: 'lost answer' }), e!.revision);
    const after = (await kv2.get(processKey(id)))!.revision;
    await waitFor(async () => (await kv2.get(processKey(id)))!.revision > after + 2, { what: 'renewals at the adopted revision' });
    t.ok(a.holds(id));
    t.same(lost.filter((l) => l.id === id), [], 'no onLost');
    await a.release(id);
  });

  t.test('the owner\'s nats-server stops: onLost fires on it before the other node can acquire', async (t) => {
    const id = 'fenced:1';
    t.ok(await a.acquire(id));
    let acquiredAt = 0;
    let stopped = false;
    t.teardown(() => { stopped = true; });
    s1.pause();
    t.teardown(() => s1.resume());
    // b tries all along; it can only win once a's key expired on the servers
    await waitFor(async () => {
      if (stopped) return true;
      if (await b.acquire(id).catch(() => false)) acquiredAt = stamp();
      return acquiredAt > 0;
    }, { timeout: 30_000, interval: 50, what: 'b acquiring the lease a lost' });
    const fenced = lost.find((l) => l.id === id && l.node === 'a');
    t.ok(fenced, 'onLost fired on the partitioned owner');
    t.equal(fenced?.reason, 'deadline');
    t.ok(fenced!.at < acquiredAt, `a stopped (${fenced!.at.toFixed(0)}) before b acquired (${acquiredAt.toFixed(0)})`);
    t.notOk(a.holds(id));

    // heal: a reconnects, reconcile confirms the lease is gone for good (no second onLost)
    s1.resume();
    await waitFor(async () => { await a.reconcile(); return true; }, { timeout: 30_000, what: 'a reconciling after the heal' });
    t.notOk(a.holds(id));
    // the rejoined server may still catch up: a transport error is retried, a refusal is the answer
    const again = await waitFor(async () => ({ won: await a.acquire(id), at: stamp() }), { timeout: 30_000, what: 'an answer to a\'s acquire' });
    t.notOk(again.won && b.holds(id), 'never both');
    if (again.won) {
      // NATS recovering from the pause stalled b's renewals past its deadline: b fenced itself first
      const bLost = lost.find((l) => l.id === id && l.node === 'b');
      t.ok(bLost && bLost.at < again.at, 'a took it back only after b\'s onLost');
    } else {
      t.pass('b owns it now');
    }
  });
});
