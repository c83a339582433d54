import t from 'tap';
import { startAuthApp, login } from '../../plugins/auth/helpers.ts';

t.test('profiling needs a token, offers no heap snapshot and runs one CPU profile at a time', async (t) => {
  const app = await startAuthApp(t, { config: { debug: { profiling: true } } });
  t.equal((await app.request('GET', '/profiling')).status, 401, 'page: token needed');
  t.equal((await app.request('GET', '/profiling/cpu?seconds=1')).status, 401, 'cpu: token needed');
  const { access_token: token } = await login(app);
  const heap = await app.request('GET', '/profiling/heap', { token });
  t.equal(heap.status, 404, 'no heap snapshot');
  t.notMatch(heap.text, 'pw-Secret-123');
  const page = await app.request('GET', '/profiling', { token });
  t.equal(page.status, 200);
  t.notMatch(page.text, /heap/i);

  const parallel = await Promise.all([1, 2, 3, 4].map(() => app.request('GET', '/profiling/cpu?seconds=2', { token })));
  const codes = parallel.map((r) => r.status).sort();
  t.same(codes, [200, 409, 409, 409], 'one runs, the others are refused');
  const busy = parallel.find((r) => r.status === 409)!;
  t.equal(busy.body.code, 409);
  t.ok(Array.isArray(parallel.find((r) => r.status === 200)!.body.nodes), 'a V8 CPU profile');
  t.equal((await app.request('GET', '/profiling/cpu?seconds=1', { token })).status, 200, 'free again afterwards');
});
