import t from 'tap';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { compareUploads, fresh, memNames, spread, threadsConfig } from './helpers.ts';

/* memfs uploads received by the serving threads (writes open) and committed by main. */

t.test('with writes open, threads receive uploads with a length and answer as main does; the file is everywhere at once', async (t) => {
  await compareUploads(t, {});
});

t.test('with memfs auth on, threads take uploads with exactly the credential; main answers the rest (401, 400) on every listener', async (t) => {
  // the wrong credentials are sent again and again until every listener answered one: no backoff
  // between them here (test/plugins/auth/basic-backoff.test.ts has the backoff with threads)
  const app = await startApp(t, { config: threadsConfig(2, {
    storage: { memory: { auth: { enable: true, username: 'u', password: 'p' } } },
    plugins: [{ name: 'auth', config: { fail_delay_ms: 0, fail_delay_max_ms: 0 } }, '*'],
  }) });
  const basic = (s: string) => ({ authorization: `Basic ${Buffer.from(s).toString('base64')}` });
  for (const [what, headers, status] of [
    ['no credential', {}, 401], ['a wrong password', basic('u:q'), 401], ['a longer password', basic('u:p:'), 401],
    ['not base64', { authorization: 'Basic a' }, 400],
  ] as const) {
    const refused = await fresh(`${app.url}/memfs/a.ts`, { method: 'PUT', body: 'x', headers });
    t.equal(refused.status, status, what);
    t.same(await spread(app, 'forwarded', () => fresh(`${app.url}/memfs/a.ts`, { method: 'PUT', body: 'x', headers }), refused), [], `${what}: main's answer on every listener`);
  }
  t.same(await memNames(app), [], 'nothing stored');
  const stored = await fresh(`${app.url}/memfs/a.ts`, { method: 'PUT', body: 'x', headers: basic('u:p') });
  t.equal(stored.status, 201);
  const again = { ...stored, status: 204, headers: { ...stored.headers, 'content-type': undefined, 'content-length': undefined } };
  const wrong = await spread(app, 'served', async () => {
    const r = await fresh(`${app.url}/memfs/a.ts`, { method: 'PUT', body: 'y', headers: { ...basic('u:p'), 'transfer-encoding': 'chunked' } });
    return { ...r, headers: { ...r.headers, 'content-type': undefined, 'content-length': undefined } };
  }, again);
  t.same(wrong, [], 'taken by both threads, answered as main does');
  t.equal((await fresh(`${app.url}/memfs/a.ts`)).body.toString(), 'y');
});

t.test('uploads a thread received reach onWritten on main (the hlsingress session counts them)', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2, { sessions: { enable: true, ip_ignorelist: [] } }) });
  const list = '#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\nseg0.ts\n';
  let sent = 0;
  const before = await app.service.threads.stats();
  await waitFor(async () => {
    for (let i = 0; i < 6; i++, sent += list.length) t.equal((await fresh(`${app.url}/memfs/in/p.m3u8`, { method: 'PUT', body: list })).status < 300, true);
    const now = await app.service.threads.stats();
    return now.every((s, i) => s.served > before[i]!.served);
  }, { timeout: 30_000, what: 'both threads receiving uploads' });
  const session = await waitFor(async () => {
    const all = (await app.request('GET', '/api/v3/session/active?collectors=hlsingress')).body.hlsingress as Array<{ id: string; bytes_rx: number }>;
    const s = all.find((x) => x.id === '/memfs/in/p.m3u8');
    return s && s.bytes_rx >= sent ? s : undefined;
  }, { timeout: 20_000, what: 'the ingress session counting every upload' });
  t.equal(session.bytes_rx, sent, 'each upload counted once');
});
