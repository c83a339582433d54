import t from 'tap';
import { createHash } from 'node:crypto';
import { ENTRY_OVERHEAD, MAX_ENTRIES, MAX_KEY_BYTES, ResultCache, type CacheTrace } from '../../../plugins/graphql/result-cache.ts';
import { PERSISTED_MAX_CHARS, PersistedQueries } from '../../../plugins/graphql/persisted.ts';
import { startApp } from '../../helpers/app.ts';

const tracked = (): CacheTrace => ({ deps: [], untracked: false });

t.test('the answer cache counts what a key holds: a client cannot keep megabytes under tiny answers', async (t) => {
  const max = 1024 * 1024;
  const cache = new ResultCache(max);
  // a query need not declare the variables it is sent: the key is whatever the client sent
  for (let i = 0; i < 2000; i++) cache.set(`${i}\0${'v'.repeat(MAX_KEY_BYTES - 10)}`, tracked(), '{"data":{"ping":"pong"}}');
  t.ok(cache.bytes <= max, `held ${cache.bytes} bytes, at most ${max}`);
  t.ok(cache.size < 2000 && cache.size > 100, `${cache.size} entries: the newest kept`);
  t.equal(cache.get(`1999\0${'v'.repeat(MAX_KEY_BYTES - 10)}`), '{"data":{"ping":"pong"}}');
  t.equal(cache.get(`0\0${'v'.repeat(MAX_KEY_BYTES - 10)}`), undefined, 'the oldest went');
  const big = new ResultCache(1024 * 1024 * 1024);
  big.set('x'.repeat(MAX_KEY_BYTES + 1), tracked(), '{}');
  t.equal(big.size, 0, 'a key over 8 KiB is never kept');
  big.set('small', tracked(), '{}');
  t.equal(big.bytes, 'small'.length + 2 + ENTRY_OVERHEAD);
});

t.test('the answer cache keeps at most so many entries, least recently used dropped', async (t) => {
  t.equal(MAX_ENTRIES, 10_000);
  const cache = new ResultCache(1024 * 1024 * 1024, 3);
  for (const k of ['a', 'b', 'c']) cache.set(k, tracked(), k);
  t.equal(cache.get('a'), 'a', 'a is the most recent now');
  cache.set('d', tracked(), 'd');
  t.equal(cache.size, 3);
  t.equal(cache.get('b'), undefined, 'b, the least recently used, went');
  t.same(['a', 'c', 'd'].map((k) => cache.get(k)), ['a', 'c', 'd']);
  cache.set('d', tracked(), 'dd');
  t.equal(cache.bytes, 1 + 1 + 1 + 1 + 1 + 2 + 3 * ENTRY_OVERHEAD, 'a key set again is counted once');
});

t.test('persisted queries are bounded by their text as well as their number', async (t) => {
  t.equal(PERSISTED_MAX_CHARS, 4 * 1024 * 1024);
  const store = new PersistedQueries(1000, 1000);
  const ext = (q: string) => ({ version: 1, sha256Hash: createHash('sha256').update(q).digest('hex') });
  const queries = Array.from({ length: 10 }, (_, i) => `{ ping } # ${String(i).padEnd(290, '.')}`);
  for (const q of queries) t.same(store.resolve(q, ext(q)), { query: q });
  t.ok(store.chars <= 1000, `${store.chars} characters kept`);
  t.same(store.resolve(undefined, ext(queries[9]!)), { query: queries[9] }, 'the newest is kept');
  t.match(store.resolve(undefined, ext(queries[0]!)), { error: { message: 'PersistedQueryNotFound' } }, 'the oldest went');
  const long = `{ ping } #${'x'.repeat(1000)}`;
  t.same(store.resolve(long, ext(long)), { query: long }, 'a query over the whole bound runs');
  t.match(store.resolve(undefined, ext(long)), { error: { message: 'PersistedQueryNotFound' } }, 'but is not kept');
  t.ok(store.chars <= 1000);
});

t.test('a query with large undeclared variables runs and is answered again', async (t) => {
  const app = await startApp(t);
  const variables = { pad: 'p'.repeat(200 * 1024) };
  for (let i = 0; i < 3; i++) {
    const r = await app.request('POST', '/api/graph/query', { body: { query: '{ ping }', variables } });
    t.same([r.status, r.body], [200, { data: { ping: 'pong' } }], `answer ${i + 1}`);
  }
});
