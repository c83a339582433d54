import t from 'tap';
import { request, startApp } from '../../helpers/app.ts';
import { ALICE, AUDIENCE, startIdp } from '../idp-login/idp.ts';

/*
 * Issue 49.1, a user's login with its identity provider (`auth.api.auth0`, the successor's): the
 * provider's token at `POST /api/login` logs in the user whose tenant and subject it names, and
 * its tokens open what that user's policies allow. The provider is a JWKS server on loopback (a
 * stand-in for Auth0, which cannot run here; the idp-login tests use the same).
 */

const API = { auth: { enable: true, username: 'admin', password: 'admin-pw', jwt: { secret: 'auth0-test-jwt-secret-0123456789' } } };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

t.test('a user logs in with its provider\'s token; another subject, audience or a turned-off login does not', async (t) => {
  const idp = await startIdp(t, 'RS256');
  // failed logins are slowed per address: a tiny delay here
  const app = await startApp(t, { config: { api: API, iam: { enable: true }, plugins: [{ name: 'auth', config: { fail_delay_ms: 10, fail_delay_max_ms: 40 } }, '*'] } });
  const admin = (await request(app.url, 'POST', '/api/login', { body: { username: 'admin', password: 'admin-pw' } })).body.access_token as string;
  const user = {
    name: 'alice', auth: { api: { auth0: { enable: true, user: ALICE, tenant: { domain: idp.domain, audience: AUDIENCE, client_id: 'client-1' } } } },
    policies: [{ types: ['api'], resource: '/api/v3/process', actions: ['GET'] }],
  };
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: user, token: admin })).status, 200);
  const login = (token: string) => request(app.url, 'POST', '/api/login', { headers: bearer(token) });

  const ok = await login(await idp.sign({}));
  t.equal(ok.status, 200, ok.text);
  const token = ok.body.access_token as string;
  t.equal((await app.request('GET', '/api/v3/process', { token })).status, 200, 'its token opens what its policies allow');
  t.equal((await app.request('GET', '/api/v3/config', { token })).status, 403, 'and nothing else');

  t.equal((await login(await idp.sign({ sub: 'auth0|mallory' }))).status, 401, 'another subject of the tenant');
  t.equal((await login(await idp.sign({ aud: 'https://another.api' }))).status, 401, 'another audience');
  t.equal((await login(await idp.sign({ exp: Math.floor(Date.now() / 1000) - 10 }))).status, 401, 'expired');
  const other = await startIdp(t, 'RS256');
  t.equal((await login(await other.sign({}))).status, 400, 'a provider no user names: no validator recognises it');

  t.equal((await app.request('PUT', '/api/v3/iam/user/alice', { body: { auth: { api: { auth0: { enable: false } } } }, token: admin })).status, 200);
  t.equal((await login(await idp.sign({}))).status, 400, 'its login turned off');
  t.equal((await app.request('GET', '/api/v3/process', { token })).status, 401, 'its tokens end with its login, as a password login\'s do');
});
