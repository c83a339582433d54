import t from 'tap';
import { Worker } from 'node:worker_threads';
import { RELEASE_NOW_BYTES, SharedRelease } from '../../../../core/door/threads/shared-release.ts';

/*
 * A serving thread's copy drops the shared body of every replaced or deleted file; V8 does not
 * count a received SharedArrayBuffer in the thread's memory, so without the release an idle
 * thread never collected them and the bytes stayed resident (issue 29). Checked with weak
 * references in a real worker (no RSS figures).
 */

const MIB = 1024 * 1024;

async function rounds(release: boolean, n: number): Promise<Array<{ alive: number; collections: number }>> {
  const w = new Worker(new URL('./fixtures/release-worker.ts', import.meta.url), { workerData: { release } });
  const next = () => new Promise<unknown>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  try {
    await next();
    const out: Array<{ alive: number; collections: number }> = [];
    for (let r = 0; r < n; r++) {
      // a round drops exactly the bound (four segments written first, then replaced in turn): the
      // last put of the round calls for the collection, whichever turn its message comes in
      const puts = RELEASE_NOW_BYTES / MIB + (r === 0 ? 4 : 0);
      for (let i = 0; i < puts; i++) w.postMessage({ t: 'put', path: `seg${i % 4}.ts`, data: new SharedArrayBuffer(MIB) });
      const answer = next();
      w.postMessage({ t: 'check' });
      out.push(await answer as { alive: number; collections: number });
    }
    return out;
  } finally {
    await w.terminate();
  }
}

t.test('the bodies a thread dropped are collected in every round, past the bound', async (t) => {
  const got = await rounds(true, 4);
  t.same(got.map((r) => r.alive), [0, 0, 0, 0], 'no dropped body is reachable after a round');
  t.same(got.map((r) => r.collections), [1, 2, 3, 4], 'one collection per round');
});

t.test('without the release an idle thread keeps every dropped body', async (t) => {
  const got = await rounds(false, 2);
  t.ok(got[0]!.alive >= RELEASE_NOW_BYTES / MIB, `held after the first round: ${got[0]!.alive}`);
  t.ok(got[1]!.alive >= 2 * (RELEASE_NOW_BYTES / MIB), `and more after the second: ${got[1]!.alive}`);
});

t.test('a trickle is collected after a quiet moment, a burst at once', async (t) => {
  const calls: string[] = [];
  const r = new SharedRelease(() => { calls.push('collect'); return true; });
  t.teardown(() => r.close());
  r.dropped(1000);
  r.run();
  t.same(calls, ['collect'], 'run collects what was dropped');
  r.run();
  t.same(calls, ['collect'], 'nothing dropped: nothing to collect');
  for (let i = 0; i < 20; i++) r.dropped(MIB);
  await new Promise((resolve) => setImmediate(resolve));
  t.same(calls, ['collect', 'collect'], 'a burst over the bound is one collection, after the turn');
  t.equal(r.collections, 2);
});
