import t from 'tap';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { compareUploads, fresh, spread, threadsConfig } from './helpers.ts';

/* memfs uploads received by the serving threads (writes open) and committed by main. */

t.test('with writes open, threads receive uploads with a length and answer as main does; the file is everywhere at once', async (t) => {
  await compareUploads(t, {});
});

t.test('with memfs auth on, uploads stay forwarded to main (401 without credentials, on every listener)', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2, { storage: { memory: { auth: { enable: true, username: 'u', password: 'p' } } } }) });
  const refused = await fresh(`${app.url}/memfs/a.ts`, { method: 'PUT', body: 'x' });
  t.equal(refused.status, 401);
  t.same(await spread(app, 'forwarded', () => fresh(`${app.url}/memfs/a.ts`, { method: 'PUT', body: 'x' }), refused), []);
  const auth = { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` };
  t.equal((await fresh(`${app.url}/memfs/a.ts`, { method: 'PUT', body: 'x', headers: auth })).status, 201);
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
