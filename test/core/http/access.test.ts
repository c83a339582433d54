import t from 'tap';
import { fileURLToPath } from 'node:url';
import { startApp } from '../../helpers/app.ts';

/*
 * The core's front door (issue 8.3): `api.read_only` and the `api.access` IP lists hold whatever
 * plugins are loaded (here without the auth plugin), on every route a plugin registers.
 */

const VENDOR = fileURLToPath(new URL('./fixtures/vendor-plugin.ts', import.meta.url));
const FORBIDDEN = { code: 403, message: 'Forbidden', details: ['Forbidden'] };
const READ_ONLY = { code: 403, message: 'Forbidden', details: ['The API is read-only (api.read_only)'] };
const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
const PLUGINS = ['disk-fs', 'memfs', VENDOR];
/** The test client poses as clients behind a reverse proxy on this host: loopback must be trusted for that. */
const LOCAL_PROXY = ['127.0.0.0/8', '::1/128'];

t.test('api.read_only without the auth plugin: changes refused, reads kept, unknown stays 404', async (t) => {
  const app = await startApp(t, { config: { api: { read_only: true }, plugins: PLUGINS } });
  for (const [method, path] of [['PUT', '/api/v3/metadata/k'], ['PUT', '/api/v3/fs/mem/a.txt'], ['DELETE', '/api/v3/fs/disk/a.txt'],
    ['PUT', '/api/v3/vendor/thing'], ['PUT', '/vendor/thing']] as const) {
    const r = await app.request(method, path, { body: method === 'PUT' ? { a: 1 } : undefined });
    t.equal(r.status, 403, `${method} ${path}`);
    t.same(r.body, READ_ONLY);
  }
  t.equal((await app.request('GET', '/api/v3/metadata')).status, 200, 'reads work');
  t.equal((await app.request('GET', '/vendor/thing')).status, 200, 'a vendor read works');
  t.equal((await app.request('PUT', '/api/v3/no-such-route', { body: {} })).status, 404, 'unknown stays 404');
  const preflight = await app.request('OPTIONS', '/api/v3/metadata/k', { headers: { origin: 'http://ui.test', 'access-control-request-method': 'PUT' } });
  t.not(preflight.status, 403, 'a CORS preflight passes');
  t.equal((await app.request('PUT', '/memfs/a.txt', { raw: 'x', headers: { authorization: 'Basic ' + Buffer.from('admin:x').toString('base64') } })).status !== 403, true,
    '/memfs is not affected by read_only (reference 11)');
});

t.test('IP lists without the auth plugin, on core, filesystem and vendor routes', async (t) => {
  const app = await startApp(t, { config: { api: { access: { http: { block: ['10.0.0.0/8'] }, trusted_proxies: LOCAL_PROXY } }, plugins: PLUGINS } });
  for (const [method, path] of [['PUT', '/api/v3/metadata/k'], ['GET', '/api/v3/fs'], ['GET', '/api/v3/fs/vfs'],
    ['GET', '/api/v3/vendor/thing'], ['GET', '/vendor/thing'], ['GET', '/api/v3/no-such-route']] as const) {
    const r = await app.request(method, path, { ...from('10.1.2.3'), body: method === 'PUT' ? { a: 1 } : undefined });
    t.equal(r.status, 403, `${method} ${path} blocked`);
    t.same(r.body, FORBIDDEN);
  }
  t.equal((await app.request('PUT', '/api/v3/metadata/k', { ...from('192.168.1.1'), body: { a: 1 } })).status, 200, 'others pass');
  t.equal((await app.request('GET', '/ping', from('10.1.2.3'))).status, 200, '/ping is not IP-filtered');
  t.equal((await app.request('GET', '/memfs/none', from('10.1.2.3'))).status, 404, 'file mounts are not IP-filtered');
});

t.test('forwarded-address headers count only from trusted proxies (issue 11.8)', async (t) => {
  const block = { http: { block: ['10.0.0.0/8'] } };
  const app = await startApp(t, { config: { api: { access: { ...block, trusted_proxies: LOCAL_PROXY } }, plugins: PLUGINS } });
  const get = (headers: Record<string, string>) => app.request('GET', '/api/v3/metadata', { headers });
  t.equal((await get({ 'x-real-ip': '10.0.0.5', 'x-forwarded-for': '192.168.7.7' })).status, 403,
    'a local proxy that sets X-Real-IP: a client-written X-Forwarded-For does not win');
  t.equal((await get({ 'x-forwarded-for': '10.0.0.5, 127.0.0.1' })).status, 403,
    'the rightmost untrusted hop, trusted proxies skipped');
  t.equal((await get({ 'x-forwarded-for': '10.0.0.5, 192.168.7.7' })).status, 200, 'not an earlier, client-written hop');
  t.equal((await get({ 'x-real-ip': '127.0.0.1', 'x-forwarded-for': '10.0.0.5' })).status, 403,
    'an X-Real-IP naming a trusted proxy falls back to the chain');

  const none = await startApp(t, { config: { api: { access: { ...block, trusted_proxies: [] } }, plugins: PLUGINS } });
  const r = await none.request('GET', '/api/v3/metadata', { headers: { 'x-forwarded-for': '10.0.0.5', 'x-real-ip': '10.0.0.5' } });
  t.equal(r.status, 200, 'with no trusted proxy the headers are ignored: the peer (127.0.0.1) counts');
  const other = await startApp(t, { config: { api: { access: { ...block, trusted_proxies: ['192.0.2.0/24'] } }, plugins: PLUGINS } });
  t.equal((await other.request('GET', '/api/v3/metadata', { headers: { 'x-forwarded-for': '10.0.0.5' } })).status, 200,
    'loopback is not trusted when the list does not name it');

  const bad = await startApp(t, { config: { plugins: PLUGINS } });
  const cfg = (await bad.request('GET', '/api/v3/config')).body.config;
  t.same(cfg.api.access.trusted_proxies, [], 'default: none (a local client must not pick its address)');
  t.equal((await bad.request('GET', '/api/v3/metadata', { headers: { 'x-real-ip': '10.0.0.5' } })).status, 200, 'headers from loopback ignored by default');
  cfg.api.access.trusted_proxies = ['nope'];
  const put = await bad.request('PUT', '/api/v3/config', { body: cfg });
  t.equal(put.status, 409, 'an invalid CIDR is refused');
  t.match(JSON.stringify(put.body), /trusted_proxies/);
});
