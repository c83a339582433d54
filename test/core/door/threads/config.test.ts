import t from 'tap';
import { startApp } from '../../../helpers/app.ts';
import { servingThreadCount } from '../../../../core/door/threads/count.ts';

t.test('http.threads: out of range is a 409 naming the key; -1 (auto) by default', async (t) => {
  // the test helpers pin 0: this one leaves the key out
  const app = await startApp(t, { config: { http: { threads: undefined } } });
  const cfg = await app.request('GET', '/api/v3/config');
  t.equal(cfg.body.config.http.threads, -1);
  for (const threads of [-2, 65]) {
    const r = await app.request('PUT', '/api/v3/config', { body: { http: { threads } } });
    t.equal(r.status, 409, String(threads));
    t.ok(r.body['http.threads'], JSON.stringify(r.body));
  }
  t.equal((await app.service.threads.stats()).length, servingThreadCount(-1), 'by default as many as this machine\'s cores say');
});

t.test('CORE_HTTP_THREADS sets it', async (t) => {
  const app = await startApp(t, { env: { CORE_HTTP_THREADS: '1' } });
  t.equal((await app.service.threads.stats()).length, 1);
});

t.test('http.threads -1 (auto): none below 4 cores, else one per core but one', async (t) => {
  t.same([1, 2, 3, 4, 8, 200].map((cores) => servingThreadCount(-1, cores)), [0, 0, 0, 3, 7, 16], 'at most 16');
  t.equal(servingThreadCount(2, 64), 2, 'a number is taken as is');
  const app = await startApp(t, { env: { CORE_HTTP_THREADS: '-1' } });
  t.equal((await app.request('GET', '/api/v3/config')).body.config.http.threads, -1);
  t.equal((await app.service.threads.stats()).length, servingThreadCount(-1), 'this machine\'s count');
});
