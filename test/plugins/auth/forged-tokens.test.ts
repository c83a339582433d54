import t from 'tap';
import { SignJWT, base64url, decodeJwt } from 'jose';
import { PASS, SECRET, UNAUTHORIZED, USER, login, startAuthApp } from './helpers.ts';

const enc = (o: unknown) => base64url.encode(JSON.stringify(o));
const realKey = new TextEncoder().encode(USER + PASS + SECRET);
const now = () => Math.floor(Date.now() / 1000);

/** A token signed with the service's real key (as an insider could) but with chosen claims. */
function sign(claims: Record<string, unknown>, opts: { key?: Uint8Array; alg?: string } = {}) {
  return new SignJWT(claims).setProtectedHeader({ alg: opts.alg ?? 'HS256', typ: 'JWT' }).sign(opts.key ?? realKey);
}

const good = () => ({ iss: 'datarhei-core', sub: USER, usefor: 'access', iat: now(), exp: now() + 600, exi: 600, jti: 'x' });

t.test('every forged or broken token is refused with 401 and the Error body', async (t) => {
  const app = await startAuthApp(t);
  const { access_token, refresh_token } = await login(app);
  const [h, p, s] = access_token.split('.');
  const claims = decodeJwt(access_token);

  const control = await sign(good());
  t.equal((await app.request('GET', '/api/v3/config', { token: control })).status, 200, 'control: a well-made token passes');

  const { usefor: _drop, ...noUsefor } = good();
  const cases: Record<string, string> = {
    'alg none': `${enc({ alg: 'none', typ: 'JWT' })}.${enc(good())}.`,
    'alg none with the original signature': `${enc({ alg: 'none', typ: 'JWT' })}.${p}.${s}`,
    'wrong key': await sign(good(), { key: new TextEncoder().encode('some other key') }),
    'key without the jwt secret': await sign(good(), { key: new TextEncoder().encode(USER + PASS) }),
    'HS512 with the right key': await sign(good(), { alg: 'HS512' }),
    'tampered payload': `${h}.${enc({ ...claims, sub: 'mallory' })}.${s}`,
    'tampered header': `${enc({ alg: 'HS256', typ: 'JWT', kid: 'x' })}.${p}.${s}`,
    'signature cut': `${h}.${p}.`,
    'signature of another token': `${h}.${p}.${refresh_token.split('.')[2]}`,
    expired: await sign({ ...good(), iat: now() - 700, exp: now() - 100 }),
    'not yet valid': await sign({ ...good(), nbf: now() + 300 }),
    'no exp': await sign((({ exp: _e, ...rest }) => rest)(good())),
    'no usefor': await sign(noUsefor),
    'usefor other': await sign({ ...good(), usefor: 'admin' }),
    'wrong issuer': await sign({ ...good(), iss: 'someone-else' }),
    'no subject': await sign((({ sub: _s, ...rest }) => rest)(good())),
    'refresh as access': refresh_token,
    garbage: 'garbage',
    'three dots of garbage': 'a.b.c',
    'JSON instead of base64': `{"alg":"none"}.{}.`,
    'latin-1 bytes': 'tökén.ÿþ.é',
    '64 KiB': 'a'.repeat(64 * 1024),
    '64 KiB of token-like data': `${h}.${'A'.repeat(64 * 1024)}.${s}`,
  };
  for (const [name, token] of Object.entries(cases)) {
    for (const path of ['/api/v3/config', '/api/v3/probe']) {
      const res = await app.request('GET', path, { headers: { authorization: `Bearer ${token}` } });
      t.equal(res.status, 401, `${name} on ${path}`);
      t.same(res.body, UNAUTHORIZED, `${name}: Error body`);
    }
  }

  const missing = await app.request('GET', '/api/v3/config');
  t.equal(missing.status, 401, 'no Authorization header');
  t.same(missing.body, UNAUTHORIZED);
  const emptyBearer = await app.request('GET', '/api/v3/config', { headers: { authorization: 'Bearer ' } });
  t.equal(emptyBearer.status, 401, 'empty bearer');
  const huge = await app.request('GET', '/api/v3/config', { headers: { authorization: 'Bearer ' + 'x'.repeat(64 * 1024) } });
  t.equal(huge.status, 401, 'a 64 KiB header is a 401, not 431');
  t.same(huge.body, UNAUTHORIZED);
  const hugeOther = await app.request('GET', '/api/v3/config', { headers: { 'x-filler': 'y'.repeat(64 * 1024) } });
  t.equal(hugeOther.status, 401, 'a 64 KiB other header does not change the answer');

  const hugeRefresh = await app.request('GET', '/api/login/refresh', { headers: { authorization: 'Bearer ' + 'x'.repeat(64 * 1024) } });
  t.equal(hugeRefresh.status, 401, 'refresh with a 64 KiB header');
  t.equal((await app.request('GET', '/api/login/refresh', { token: 'garbage' })).status, 401);
  const refreshForged = await sign({ ...good(), usefor: 'refresh' }, { key: new TextEncoder().encode('x') });
  t.equal((await app.request('GET', '/api/login/refresh', { token: refreshForged })).status, 401, 'refresh token with a wrong key');
  const refreshNone = `${enc({ alg: 'none' })}.${enc({ ...good(), usefor: 'refresh' })}.`;
  t.equal((await app.request('GET', '/api/login/refresh', { token: refreshNone })).status, 401, 'refresh token with alg none');

  t.equal((await app.request('GET', '/api/v3/config', { token: access_token })).status, 200, 'the real token still works');
});

t.test('a token made for other credentials is refused, even with the same secret', async (t) => {
  const app = await startAuthApp(t);
  const other = await sign(good(), { key: new TextEncoder().encode(USER + 'old-password' + SECRET) });
  t.equal((await app.request('GET', '/api/v3/config', { token: other })).status, 401);
});
