import t from 'tap';
import { SignJWT, base64url, decodeJwt, generateKeyPair } from 'jose';
import { ALICE, AUDIENCE, startIdp, type Idp } from './idp.ts';
import { createTestApp } from '../../../testkit/index.ts';
import { PROBE, startAuthApp } from '../auth/helpers.ts';

const tenant = (idp: Idp, users = [ALICE]) => ({ domain: idp.domain, audience: AUDIENCE, clientid: 'client-1', users });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

t.test('a listed user of a tenant logs in with the provider token; others are refused', async (t) => {
  const rsa = await startIdp(t, 'RS256');
  const ec = await startIdp(t, 'ES256');
  const app = await startAuthApp(t, {
    auth: { idp: { enable: true, tenants: [tenant(rsa), tenant(ec, ['google-oauth2|carol'])] } },
    plugins: ['idp-login'],
  });
  const login = (headers: Record<string, string>, raw?: string) =>
    app.request('POST', '/api/login', { headers: raw === undefined ? headers : { ...headers, 'content-type': 'application/json' }, raw });

  const ok = await login(bearer(await rsa.sign({})));
  t.equal(ok.status, 200, ok.text);
  t.equal(decodeJwt(ok.body.access_token).sub, ALICE, 'our token carries the provider subject');
  t.equal(decodeJwt(ok.body.refresh_token).usefor, 'refresh');
  t.match((await app.request('GET', '/api/v3/probe', { token: ok.body.access_token })).body.auth, { user: ALICE, via: 'jwt', login: Number });
  t.equal((await app.request('GET', '/api/login/refresh', { token: ok.body.refresh_token })).status, 200);
  t.equal((await login(bearer(await rsa.sign({})), '')).status, 200, 'an empty JSON body is fine');
  t.equal((await login({ authorization: `bearer ${await ec.sign({ sub: 'google-oauth2|carol' })}` })).status, 200, 'second tenant, EC keys');

  const about = await app.request('GET', '/api');
  t.same(about.body.auths, ['localjwt', `auth0 domain=${rsa.domain} audience=${AUDIENCE} clientid=client-1`,
    `auth0 domain=${ec.domain} audience=${AUDIENCE} clientid=client-1`]);

  const refused: Record<string, string> = {
    'unlisted user': await rsa.sign({ sub: 'auth0|bob' }),
    'user of the other tenant': await ec.sign({}),
    expired: await rsa.sign({ iat: Math.floor(Date.now() / 1000) - 600, exp: Math.floor(Date.now() / 1000) - 60 }),
    'not yet valid': await rsa.sign({ nbf: Math.floor(Date.now() / 1000) + 600 }),
    'wrong audience': await rsa.sign({ aud: 'https://other.test' }),
    'no kid': await rsa.sign({}, { kid: null }),
    'unknown kid': await rsa.sign({}, { kid: 'key-9' }),
    'signed by another key': await rsa.sign({}, { key: (await generateKeyPair('RS256')).privateKey }),
    'signed by the other tenant key': await ec.sign({ iss: rsa.domain }),
    'HS256 with a secret': await new SignJWT({ iss: rsa.domain, aud: AUDIENCE, sub: ALICE, exp: Math.floor(Date.now() / 1000) + 60 })
      .setProtectedHeader({ alg: 'HS256', kid: 'key-1' }).sign(new TextEncoder().encode('guess')),
    'alg none': `${base64url.encode(JSON.stringify({ alg: 'none', kid: 'key-1' }))}.${base64url.encode(JSON.stringify({ iss: rsa.domain, aud: AUDIENCE, sub: ALICE, exp: Math.floor(Date.now() / 1000) + 60 }))}.`,
    'tampered payload': await (async () => {
      const [h, , s] = (await rsa.sign({ sub: 'auth0|bob' })).split('.');
      return `${h}.${base64url.encode(JSON.stringify({ iss: rsa.domain, aud: AUDIENCE, sub: ALICE, exp: Math.floor(Date.now() / 1000) + 60 }))}.${s}`;
    })(),
  };
  for (const [name, token] of Object.entries(refused)) {
    const r = await login(bearer(token));
    t.equal(r.status, 401, name);
    t.equal(r.body.message, 'Unauthorized', `${name}: Error body`);
    t.match(r.body.details[0], /^Invalid authorization credentials: /, `${name}: ${r.body.details[0]}`);
  }

  const foreign = await login(bearer(await new SignJWT({ sub: ALICE }).setIssuer('https://elsewhere.test/')
    .setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('x'))));
  t.equal(foreign.status, 400, 'a token of no configured issuer is not recognised');
  t.same(foreign.body.details, ['Missing authorization credentials']);

  const direct = await app.request('GET', '/api/v3/probe', { headers: bearer(await rsa.sign({})) });
  t.equal(direct.status, 401, 'a provider token is no API token');
  t.ok(rsa.fetches >= 1 && rsa.fetches <= 3, `the JWKS is cached (${rsa.fetches} fetches)`);
});

t.test('the auth0 alias configures the same tenants; an unreachable provider is a refusal', async (t) => {
  const rsa = await startIdp(t, 'RS256');
  const app = await startAuthApp(t, {
    auth: { auth0: { enable: true, tenants: [tenant(rsa), { domain: 'http://127.0.0.1:1/', audience: AUDIENCE, clientid: 'c', users: [ALICE] }] } },
    plugins: ['idp-login'],
  });
  const cfg = await app.request('GET', '/api/v3/config', { token: (await app.request('POST', '/api/login', { headers: bearer(await rsa.sign({})) })).body.access_token });
  t.equal(cfg.status, 200);
  t.same(cfg.body.config.api.auth.idp, cfg.body.config.api.auth.auth0, 'both names hold the same tenants');
  const down = await app.request('POST', '/api/login', { headers: bearer(await rsa.sign({ iss: 'http://127.0.0.1:1/' })) });
  t.equal(down.status, 401, 'provider down: refused, not a 500');
  t.match(down.body.details[0], /^Invalid authorization credentials: /);
});

t.test('with idp disabled or auth disabled, provider tokens log nobody in', async (t) => {
  const rsa = await startIdp(t, 'RS256');
  const off = await startAuthApp(t, { auth: { idp: { enable: false, tenants: [tenant(rsa)] } }, plugins: ['idp-login'] });
  const r = await off.request('POST', '/api/login', { headers: bearer(await rsa.sign({})) });
  t.equal(r.status, 400, 'idp off: not recognised');
  t.equal(rsa.fetches, 0);

  const noAuth = await createTestApp({
    t, config: { api: { auth: { idp: { enable: true, tenants: [tenant(rsa)] } } }, plugins: ['auth', 'idp-login', PROBE] },
  });
  t.equal((await noAuth.request('POST', '/api/login', { headers: bearer(await rsa.sign({})) })).status, 404, 'auth off: no login route');
  t.equal((await noAuth.request('GET', '/api/v3/probe')).status, 200);
});
