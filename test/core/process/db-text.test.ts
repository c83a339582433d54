import t from 'tap';
import { FragmentCache } from '../../../core/process/db-text.ts';
import { tracked } from '../../../core/process/db-tracked.ts';
import { usedAfterGc } from '../../helpers/memory.ts';

/*
 * The cached text of db.json (issue 46 point 5): what it keeps is bounded by the entries that
 * exist, and its bytes hold no slab of Node's shared Buffer pool.
 */

const KB = 1024;

function render(cache: FragmentCache, d: Record<string, unknown>): string {
  const out: Buffer[] = [];
  cache.dict(d, 2, out);
  return Buffer.concat(out).toString('utf8');
}

t.test('the text is JSON.stringify(…, null, 4) at its depth', async (t) => {
  const cache = new FragmentCache();
  const d = tracked<unknown>({});
  for (let i = 0; i < 200; i++) d[`p${i}`] = i % 3 ? null : { a: [i, 'x'], b: { c: i } };
  delete d.p7;
  d.p8 = { replaced: true };
  const want = JSON.stringify(d, null, 4).replace(/\n/g, `\n${'    '.repeat(2)}`);
  t.equal(render(cache, d), want);
});

t.test('20,000 keys added and removed leave nothing cached', async (t) => {
  // db.json's metadata of processes: a process without metadata is a `null` entry (a primitive
  // line, cached per dictionary and key); before, a deleted key's line stayed cached for good
  const cache = new FragmentCache();
  const d = tracked<unknown>({ kept: null });
  const round = (from: number, n: number) => {
    for (let i = from; i < from + n; i++) {
      d[`process-${i}`] = null;
      render(cache, d);
      delete d[`process-${i}`];
      render(cache, d);
    }
  };
  // a first round of the same size takes the one-time costs (compiled code, coverage counters,
  // the dictionary's own tables) so the second measures only what a key leaves behind
  round(0, 20_000);
  const before = await usedAfterGc();
  round(20_000, 20_000);
  const after = await usedAfterGc();
  t.equal(render(cache, d), '{\n            "kept": null\n        }');
  const buffers = after.buffers - before.buffers;
  const heap = after.heap - before.heap;
  t.ok(buffers < 16 * KB, `ArrayBuffers +${(buffers / KB).toFixed(1)} KB (before the fix 4.7 MB)`);
  t.ok(heap < 1024 * KB, `heap +${(heap / KB).toFixed(1)} KB (before the fix 4.5 MB)`);
});

t.test('cached bytes pin no slab of the shared Buffer pool', async (t) => {
  // 300 entries added one at a time, each with a request's worth of pooled allocations between
  // (a body, a response): a line or block cut from the pool kept the whole 64 KiB slab alive
  const cache = new FragmentCache();
  const d = tracked<unknown>({});
  const transient: Buffer[] = [];
  const before = await usedAfterGc();
  let text = '';
  for (let i = 0; i < 300; i++) {
    d[`process-${i}`] = { reference: 'r'.repeat(200), n: i };
    text = render(cache, d);
    transient.push(Buffer.from('x'.repeat(20 * KB)));
    transient.length = 0;
  }
  const held = (await usedAfterGc()).buffers - before.buffers;
  const bytes = Buffer.byteLength(text);
  // what the cache means to hold: each entry's line and the blocks made of them, the text twice
  t.ok(held < 3 * bytes, `ArrayBuffers held ${(held / KB).toFixed(0)} KB for ${(bytes / KB).toFixed(0)} KB of text (before the fix 12 MB: 140 times the text)`);
});
