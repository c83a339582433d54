import t, { type Test } from 'tap';
import type { Requester } from '../../helpers/app.ts';
import { UNAUTHORIZED, USER, login, startAuthApp, startOpenApp } from './helpers.ts';

const FORBIDDEN = { code: 403, message: 'Forbidden', details: ['Forbidden'] };
const from = (ip: string) => ({ 'x-forwarded-for': ip });

t.test('with auth on: protected routes need the token, public ones do not', async (t) => {
  const app = await startAuthApp(t);
  for (const [method, path] of [['GET', '/api/v3/config'], ['PUT', '/api/v3/config'], ['GET', '/api/v3/config/reload'],
    ['GET', '/api/v3/metadata/x'], ['PUT', '/api/v3/metadata/x'], ['GET', '/api/v3/log'], ['GET', '/api/v3/probe'],
    ['DELETE', '/api/v3/probe'], ['GET', '/api/v3/no-such-route'], ['POST', '/api/graph/query']] as const) {
    const r = await app.request(method, path, { body: method === 'GET' || method === 'DELETE' ? undefined : {} });
    t.equal(r.status, 401, `${method} ${path} without token`);
    t.same(r.body, UNAUTHORIZED);
  }
  t.equal((await app.request('GET', '/ping')).text, 'pong', '/ping is public');
  t.equal((await app.request('GET', '/api/swagger/json')).status, 200, 'swagger is public');
  t.equal((await app.request('GET', '/api/v3/widget-probe')).status, 200, 'a PUBLIC route under /api');
  t.equal((await app.request('GET', '/probe-network')).status, 200, 'a NETWORK route needs no token');
  t.equal((await app.request('GET', '/no-such-file')).status, 404, 'unknown paths outside /api are 404, not 401');
  const preflight = await app.request('OPTIONS', '/api/v3/config', { headers: { origin: 'http://ui.test', 'access-control-request-method': 'GET' } });
  t.not(preflight.status, 401, 'a CORS preflight (never with credentials) is not refused for its missing token');

  const { access_token: token } = await login(app);
  t.equal((await app.request('GET', '/api/v3/log', { token })).status, 200);
  t.equal((await app.request('PUT', '/api/v3/metadata/x', { token, body: { a: 1 } })).status, 200);
  t.same((await app.request('GET', '/api/v3/metadata/x', { token })).body, { a: 1 });
  const unknown = await app.request('GET', '/api/v3/no-such-route', { token });
  t.equal(unknown.status, 404, 'unknown API route: 401 first, then 404');
});

t.test('GET /api answers the minimal About without a valid token', async (t) => {
  const app = await startAuthApp(t);
  for (const headers of [{}, { authorization: 'Bearer garbage' }, { authorization: 'Basic YTpi' }] as Record<string, string>[]) {
    const r = await app.request('GET', '/api', { headers });
    t.equal(r.status, 200);
    t.same(Object.keys(r.body).sort(), ['app', 'auths', 'version']);
    t.equal(r.body.app, 'datarhei-core');
    t.same(r.body.auths, ['localjwt']);
    t.same(r.body.version, { number: '16.0.0' });
    t.notOk('id' in r.body || 'uptime_seconds' in r.body, 'no id, no uptime');
  }
  const { access_token, refresh_token } = await login(app);
  const full = await app.request('GET', '/api', { token: access_token });
  t.ok(full.body.id, 'full About with a token');
  t.type(full.body.uptime_seconds, 'number');
  t.notOk((await app.request('GET', '/api', { token: refresh_token })).body.id, 'a refresh token is no access token');
});

async function ipListChecks(t: Test, app: Requester, token?: string) {
  const opts = (ip: string) => ({ headers: from(ip), token });
  for (const path of ['/api/v3/config', '/api', '/probe-network', '/api/v3/no-such-route']) {
    const r = await app.request('GET', path, opts('10.1.2.3'));
    t.equal(r.status, 403, `blocked address on ${path}`);
    t.same(r.body, FORBIDDEN);
  }
  t.equal((await app.request('GET', '/api/v3/config', opts('::ffff:10.9.9.9'))).status, 403, 'IPv4-mapped IPv6');
  t.equal((await app.request('GET', '/api/v3/config', opts('2001:db8::7'))).status, 403, 'blocked IPv6 net');
  t.equal((await app.request('GET', '/api/v3/config', opts('192.168.7.7'))).status, 200, 'allowed address');
  t.equal((await app.request('GET', '/api/v3/config', opts('172.16.0.1'))).status, 403, 'not in the allow list');
  t.equal((await app.request('GET', '/api/v3/config', opts('192.168.66.1'))).status, 403, 'block wins over allow');
  for (const path of ['/ping', '/api/v3/widget-probe', '/api/swagger/json']) {
    t.equal((await app.request('GET', path, opts('10.1.2.3'))).status, 200, `${path} is not IP-filtered`);
  }
}

const lists = { http: { allow: ['192.168.0.0/16', '127.0.0.1/32'], block: ['10.0.0.0/8', '2001:db8::/32', '192.168.66.0/24'] } };

t.test('IP access lists apply with auth on', async (t) => {
  const app = await startAuthApp(t, { api: { access: lists } });
  const { access_token } = await login(app, USER, undefined, from('10.1.2.3'));
  t.ok(access_token, 'login is not IP-filtered (reference 1.1)');
  await ipListChecks(t, app, access_token);
  const noToken = await app.request('GET', '/api/v3/config', { headers: from('10.1.2.3') });
  t.equal(noToken.status, 403, 'a blocked client learns nothing about its token');
});

t.test('IP access lists apply with auth off, and an empty allow list allows all', async (t) => {
  const app = await startOpenApp(t, { api: { access: lists } });
  await ipListChecks(t, app);
  const open = await startOpenApp(t, { api: { access: { http: { block: ['10.0.0.0/8'] } } } });
  t.equal((await open.request('GET', '/api/v3/config', { headers: from('172.16.0.1') })).status, 200);
  t.equal((await open.request('GET', '/api/v3/config', { headers: from('10.0.0.1') })).status, 403);
});

async function readOnlyChecks(t: Test, app: Requester, token?: string) {
  for (const [method, path] of [['PUT', '/api/v3/metadata/x'], ['PUT', '/api/v3/config'], ['GET', '/api/v3/config/reload'],
    ['PUT', '/api/v3/probe'], ['DELETE', '/api/v3/probe'], ['GET', '/api/v3/probe/act']] as const) {
    const r = await app.request(method, path, { token, body: method === 'PUT' ? { a: 1 } : undefined });
    t.equal(r.status, 403, `${method} ${path} refused`);
    t.same(r.body, { code: 403, message: 'Forbidden', details: ['The API is read-only (api.read_only)'] });
  }
  t.equal((await app.request('GET', '/api/v3/config', { token })).status, 200, 'reads work');
  t.equal((await app.request('GET', '/api/v3/metadata', { token })).status, 200);
  t.equal((await app.request('POST', '/api/v3/probe/query', { token, body: {} })).status, 200, 'a querying POST works');
  t.equal((await app.request('POST', '/api/v3/no-such-route', { token, body: {} })).status, 404, 'unknown stays 404');
}

t.test('api.read_only refuses changes and keeps reads, with auth on', async (t) => {
  const app = await startAuthApp(t, { api: { read_only: true } });
  const { access_token } = await login(app);
  t.equal((await app.request('PUT', '/api/v3/metadata/x', { body: 1 })).status, 401, 'without token: 401 first');
  await readOnlyChecks(t, app, access_token);
});

t.test('api.read_only refuses changes and keeps reads, with auth off', async (t) => {
  const app = await startOpenApp(t, { api: { read_only: true } });
  await readOnlyChecks(t, app);
});

t.test('disable_localhost exempts loopback clients only', async (t) => {
  const app = await startAuthApp(t, { auth: { disable_localhost: true } });
  const local = await app.request('GET', '/api/v3/probe');
  t.equal(local.status, 200, 'loopback without token');
  t.same(local.body.auth, { user: USER, via: 'localhost' });
  t.ok((await app.request('GET', '/api')).body.id, 'full About for localhost');
  t.equal((await app.request('GET', '/api/v3/probe', { headers: from('10.0.0.5') })).status, 401, 'proxied remote client');
  t.equal((await app.request('GET', '/api/v3/probe', { headers: from('127.0.0.1, 10.0.0.5') })).status, 401,
    'a client cannot pose as localhost through X-Forwarded-For (the proxy appends the real address)');
  t.equal((await app.request('GET', '/api/v3/probe', { headers: { 'x-real-ip': '10.0.0.5' } })).status, 401, 'X-Real-IP from a local proxy');
  const { access_token } = await login(app);
  t.match((await app.request('GET', '/api/v3/probe', { token: access_token })).body.auth, { user: USER, via: 'jwt', login: Number }, 'a token\'s caller, with when its login began');
});
