import t from 'tap';
import { decodeJwt } from 'jose';
import { PASS, SECRET, UNAUTHORIZED, USER, login, startAuthApp, startAuthService, startOpenApp } from './helpers.ts';

t.test('local login issues access and refresh tokens with the reference claims', async (t) => {
  const app = await startAuthApp(t);
  const before = Math.floor(Date.now() / 1000);
  const res = await app.request('POST', '/api/login', { body: { username: USER, password: PASS } });
  t.equal(res.status, 200);
  t.same(Object.keys(res.body).sort(), ['access_token', 'refresh_token']);
  const access = decodeJwt(res.body.access_token);
  const refresh = decodeJwt(res.body.refresh_token);
  for (const [claims, use, exi] of [[access, 'access', 600], [refresh, 'refresh', 86400]] as const) {
    t.equal(claims.iss, 'datarhei-core');
    t.equal(claims.sub, USER);
    t.equal(claims.usefor, use);
    t.equal(claims.exi, exi);
    t.ok(claims.iat! >= before && claims.iat! <= before + 5, 'iat is now');
    t.equal(claims.exp! - claims.iat!, exi, 'lifetime');
    t.match(claims.jti, /^[0-9a-f-]{36}$/);
  }
  t.not(access.jti, refresh.jti, 'every token has its own id');

  t.equal((await app.request('GET', '/api/v3/config', { token: res.body.access_token })).status, 200);
  t.equal((await app.request('GET', '/api/v3/probe', { token: res.body.access_token })).body.auth.user, USER);
});

t.test('refresh gives a new access token; the token kinds never stand in for each other', async (t) => {
  const app = await startAuthApp(t);
  const { access_token, refresh_token } = await login(app);

  const r = await app.request('GET', '/api/login/refresh', { token: refresh_token });
  t.equal(r.status, 200);
  t.same(Object.keys(r.body), ['access_token']);
  t.equal(decodeJwt(r.body.access_token).usefor, 'access');
  t.equal((await app.request('GET', '/api/v3/config', { token: r.body.access_token })).status, 200);

  const asAccess = await app.request('GET', '/api/v3/config', { token: refresh_token });
  t.equal(asAccess.status, 401, 'refresh token refused as access token');
  t.same(asAccess.body, UNAUTHORIZED);
  const asRefresh = await app.request('GET', '/api/login/refresh', { token: access_token });
  t.equal(asRefresh.status, 401, 'access token refused as refresh token');
  t.same(asRefresh.body, UNAUTHORIZED);
  t.equal((await app.request('GET', '/api/login/refresh')).status, 401, 'refresh without token');
});

t.test('the Bearer scheme is case-insensitive; other schemes are refused', async (t) => {
  const app = await startAuthApp(t);
  const { access_token } = await login(app);
  t.equal((await app.request('GET', '/api/v3/config', { headers: { authorization: `bEaReR ${access_token}` } })).status, 200);
  t.equal((await app.request('GET', '/api/v3/config', { headers: { authorization: `Token ${access_token}` } })).status, 401);
  t.equal((await app.request('GET', '/api/v3/config', { headers: { authorization: access_token } })).status, 401);
  t.equal((await app.request('GET', `/api/v3/config?token=${access_token}`)).status, 401, 'no query alternative');
});

t.test('bad logins: wrong credentials 401, unrecognised requests 400, bad JSON 400', async (t) => {
  const app = await startAuthApp(t);
  const wrongPass = await app.request('POST', '/api/login', { body: { username: USER, password: 'nope' } });
  t.equal(wrongPass.status, 401);
  t.same(wrongPass.body, { code: 401, message: 'Unauthorized', details: ['Invalid authorization credentials: invalid username or password'] });
  const wrongUser = await app.request('POST', '/api/login', { body: { username: 'root', password: PASS } });
  t.equal(wrongUser.status, 401);
  const prefix = await app.request('POST', '/api/login', { body: { username: USER, password: PASS.slice(0, -1) } });
  t.equal(prefix.status, 401, 'a prefix of the password is not the password');
  const longer = await app.request('POST', '/api/login', { body: { username: USER, password: PASS + 'x' } });
  t.equal(longer.status, 401);

  for (const body of [{}, { username: USER }, { username: '', password: '' }, { username: USER, password: 5 }, [USER, PASS]]) {
    const r = await app.request('POST', '/api/login', { body });
    t.equal(r.status, 400, `unrecognised: ${JSON.stringify(body)}`);
    t.same(r.body, { code: 400, message: 'Bad Request', details: ['Missing authorization credentials'] });
  }
  const empty = await app.request('POST', '/api/login', { raw: '', headers: { 'content-type': 'application/json' } });
  t.equal(empty.status, 400);
  t.same(empty.body.details, ['Missing authorization credentials']);
  const broken = await app.request('POST', '/api/login', { raw: '{"username":', headers: { 'content-type': 'application/json' } });
  t.equal(broken.status, 400);
  t.equal(broken.body.message, 'Invalid JSON');
  const extra = await app.request('POST', '/api/login', { body: { username: USER, password: PASS, extra: true } });
  t.equal(extra.status, 200, 'unknown fields are ignored');
});

t.test('tokens survive a reload and die when the credentials change', async (t) => {
  const app = await startAuthService(t);
  const { access_token, refresh_token } = await login(app);
  await app.service.reload();
  t.equal((await app.request('GET', '/api/v3/config', { token: access_token })).status, 200, 'access token after reload');
  t.equal((await app.request('GET', '/api/login/refresh', { token: refresh_token })).status, 200, 'refresh token after reload');

  const put = await app.request('PUT', '/api/v3/config', { token: access_token, body: { api: { auth: { password: 'another-pass' } } } });
  t.equal(put.status, 200, put.text);
  await app.service.reload();
  t.equal((await app.request('GET', '/api/v3/config', { token: access_token })).status, 401, 'old access token dead');
  t.equal((await app.request('GET', '/api/login/refresh', { token: refresh_token })).status, 401, 'old refresh token dead');
  t.equal((await app.request('POST', '/api/login', { body: { username: USER, password: PASS } })).status, 401, 'old password refused');
  const fresh = await login(app, USER, 'another-pass');
  t.equal((await app.request('GET', '/api/v3/config', { token: fresh.access_token })).status, 200);

  const put2 = await app.request('PUT', '/api/v3/config', { token: fresh.access_token, body: { api: { auth: { jwt: { secret: 'rotated' } } } } });
  t.equal(put2.status, 200);
  await app.service.reload();
  t.equal((await app.request('GET', '/api/v3/config', { token: fresh.access_token })).status, 401, 'a new jwt.secret kills tokens too');
});

t.test('without auth the login routes do not exist and every API route is open', async (t) => {
  const app = await startOpenApp(t);
  const l = await app.request('POST', '/api/login', { body: { username: USER, password: PASS } });
  t.equal(l.status, 404);
  t.equal(l.body.code, 404);
  t.equal((await app.request('GET', '/api/login/refresh')).status, 404);
  t.equal((await app.request('GET', '/api/v3/config')).status, 200);
  t.equal((await app.request('PUT', '/api/v3/metadata/k', { body: 1 })).status, 200);
  t.same((await app.request('GET', '/api/v3/probe')).body.auth, { user: '', via: 'disabled' });
  const about = await app.request('GET', '/api');
  t.equal(about.status, 200);
  t.ok(about.body.id, 'full About');
  t.same(about.body.auths, []);
  void SECRET;
});
