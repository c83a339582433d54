import t from 'tap';
import { request as httpRequest } from 'node:http';
import { request, startApp } from '../../helpers/app.ts';

/*
 * Issue 49.2, reads of the public mounts by `fs` policies (the successor's rule), with and without
 * serving threads (a thread leaves the reads to main once they need deciding): `$anon` reads
 * everything by default (as before); once its policies are narrowed, an anonymous read outside
 * them is a 401 with the Basic challenge, a user's Basic password reads what its policies allow
 * (403 beyond), the mount's own credential reads all of it, and a session token
 * (`PUT /api/v3/session/token/{name}`, `?token=`) reads what its user may within its `match` and
 * `remote`, carried on to the segments a playlist names.
 */

interface Answer { status: number; text: string; headers: Record<string, string | string[] | undefined> }

/** One request on a connection of its own (spread over main and the threads). */
function get(url: string, path: string, headers: Record<string, string> = {}, method = 'GET', body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { method, agent: false, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const basic = (user: string, pass: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` });
const MEM = basic('mem', 'mem-pw-5d1c');
const VIEWER_PW = 'viewer-basic-2f8e61c0a4';
const SESSION_SECRET = 'session-secret-9b3d7e21f6a04c58';
const PLAYLIST = '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\nseg1.ts\n#EXTINF:2.0,\nseg2.ts?x=1\n#EXTINF:2.0,\nhttps://cdn.example.net/seg3.ts\n';

for (const threads of [0, 2]) t.test(`reads of memfs by fs policies (${threads} serving threads)`, async (t) => {
  const app = await startApp(t, { config: { iam: { enable: true }, http: { threads }, storage: { memory: { auth: { enable: true, username: 'mem', password: 'mem-pw-5d1c' } } } } });
  for (const [path, body] of [['/memfs/public/a.txt', 'public'], ['/memfs/private/b.txt', 'private'], ['/memfs/other/c.txt', 'other'], ['/memfs/private/live.m3u8', PLAYLIST], ['/memfs/private/seg1.ts', 'segment']]) {
    t.ok([201, 204].includes((await get(app.url, path!, MEM, 'PUT', body)).status), `stored ${path}`);
  }
  // the default: anyone reads, as before
  const anon = (await app.request('GET', '/api/v3/iam/user')).body.find((u: { name: string }) => u.name === '$anon');
  t.same(anon.policies, [{ domain: '$none', types: ['fs'], resource: '/**', actions: ['GET', 'HEAD', 'OPTIONS'] }], '$anon reads every mount by default');
  for (let i = 0; i < 4; i++) t.equal((await get(app.url, '/memfs/private/b.txt')).text, 'private', 'read without credentials while $anon may');

  t.equal((await app.request('PUT', '/api/v3/iam/user/$anon/policy', { body: [{ types: ['fs'], resource: '/memfs/public/**', actions: ['GET', 'HEAD'] }] })).status, 200);
  const viewer = {
    name: 'viewer', alias: 'The Viewer', auth: { services: { basic: [VIEWER_PW], session: [SESSION_SECRET] } },
    policies: [{ types: ['fs'], resource: '/memfs/private/**', actions: ['GET'] }],
  };
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: viewer })).status, 200);

  for (let i = 0; i < 4; i++) {
    t.equal((await get(app.url, '/memfs/public/a.txt')).text, 'public', 'what $anon may, read without credentials');
    const refused = await get(app.url, '/memfs/private/b.txt');
    t.equal(refused.status, 401, 'anonymous, outside $anon\'s policies');
    t.match(refused.headers['www-authenticate'], /^Basic realm=/i, 'with the Basic challenge');
    t.match(JSON.parse(refused.text), { code: 401, message: 'Unauthorized' }, 'an Error body');
    t.equal((await get(app.url, '/memfs/private/b.txt', {}, 'HEAD')).status, 401, 'a HEAD as a GET');
  }
  t.equal((await get(app.url, '/memfs/private/b.txt', basic('viewer', VIEWER_PW))).text, 'private', 'a user\'s Basic password, within its policies');
  t.equal((await get(app.url, '/memfs/other/c.txt', basic('viewer', VIEWER_PW))).status, 403, 'beyond them');
  t.equal((await get(app.url, '/memfs/private/b.txt', basic('viewer', 'wrong'))).status, 401, 'a wrong password');
  t.equal((await get(app.url, '/memfs/private/b.txt', basic('$anon', ''))).status, 401, '$anon has no password');
  t.equal((await get(app.url, '/memfs/other/c.txt', MEM)).text, 'other', 'the mount\'s own credential reads all of it');
  t.equal((await get(app.url, '/memfs/private/b.txt', { authorization: 'Basic %%%' })).status, 400, 'a credential that is no base64');

  // session tokens
  const asked = await app.request('PUT', '/api/v3/session/token/viewer', { body: [{ match: '/memfs/private/**', ttl_sec: 600, unknown: 1 }, { remote: ['*.example.com'] }, {}] });
  t.equal(asked.status, 200, asked.text);
  const [scoped, remote, plain] = asked.body.map((r: { token: string }) => r.token) as string[];
  t.match(asked.body[0], { match: '/memfs/private/**', ttl_sec: 600 });
  t.equal(asked.body[2].ttl_sec, 3600, 'a default life');
  t.equal((await get(app.url, `/memfs/private/b.txt?token=${scoped}`)).text, 'private', 'a session token, within its match');
  t.equal((await get(app.url, `/memfs/other/c.txt?token=${plain}`)).status, 403, 'not beyond its user\'s policies');
  t.equal((await get(app.url, `/memfs/public/a.txt?token=${scoped}`)).status, 403, 'nor beyond its match');
  t.equal((await get(app.url, `/memfs/private/b.txt?token=${scoped.slice(0, -2)}xx`)).status, 403, 'a token altered');
  t.equal((await get(app.url, '/memfs/private/b.txt?token=not-a-token')).status, 403, 'no token at all');
  t.equal((await get(app.url, `/memfs/private/b.txt?token=${remote}`)).status, 403, 'a token for referrers, without one');
  t.equal((await get(app.url, `/memfs/private/b.txt?token=${remote}`, { referer: 'https://evil.example.org/page' })).status, 403, 'from another host');
  t.equal((await get(app.url, `/memfs/private/b.txt?token=${remote}`, { referer: 'https://www.example.com/page' })).text, 'private', 'from its host');
  const list = await get(app.url, `/memfs/private/live.m3u8?token=${scoped}`);
  t.equal(list.status, 200, list.text);
  t.match(list.text, new RegExp(`seg1\\.ts\\?(.*&)?token=${scoped}`), 'the token carried to the segments');
  t.match(list.text, new RegExp(`seg2\\.ts\\?x=1&(.*&)?token=${scoped}`), 'after their own query');
  t.notOk(/cdn\.example\.net\/seg3\.ts\?[^\n]*token=/.test(list.text), 'never to another server');
  t.equal((await get(app.url, `/memfs/private/seg1.ts?token=${scoped}`)).text, 'segment');

  const log = (await app.request('GET', '/api/v3/log')).text;
  t.match(log, /fs read refused: user viewer may not read \/memfs\/other\/c\.txt/, 'a refusal logged with its user, action and path');
  t.match(log, /fs read refused: invalid token: wrong signature/, 'a token\'s refusal with why');
  t.notOk(log.includes(scoped) || log.includes(VIEWER_PW), 'never a token or a password');

  // who may ask
  t.equal((await app.request('PUT', '/api/v3/session/token/nobody', { body: [{}] })).status, 404, 'no such user');
  t.equal((await app.request('PUT', '/api/v3/session/token/viewer', { body: { match: 1 } })).status, 400, 'not a list');
  t.equal((await app.request('PUT', '/api/v3/session/token/viewer', { body: [{ extra: { pad: 'x'.repeat(9000) } }] })).status, 400, 'a token too long to be read back');
  t.equal((await app.request('PUT', '/api/v3/iam/user/viewer', { body: { auth: { services: { session: [] } } } })).status, 200);
  t.equal((await app.request('PUT', '/api/v3/session/token/viewer', { body: [{}] })).body[0].token, '', 'a user without a session secret gets ""');
  t.equal((await get(app.url, `/memfs/private/b.txt?token=${scoped}`)).status, 403, 'its tokens end with its secret');

  // $anon may read everything again: reads are public as before
  t.equal((await app.request('PUT', '/api/v3/iam/user/$anon/policy', { body: [{ types: ['fs'], resource: '/**', actions: ['GET'] }] })).status, 200);
  t.equal((await get(app.url, '/memfs/other/c.txt')).text, 'other', 'read without credentials again');

  // a domain: the first folder below the mount, when a policy names it; $anon's policy is $none's
  const tv = { name: 'tv-viewer', auth: { services: { basic: [VIEWER_PW] } }, policies: [{ domain: 'tv', types: ['fs'], resource: '/memfs/tv/**', actions: ['GET'] }] };
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: tv })).status, 200);
  t.ok([201, 204].includes((await get(app.url, '/memfs/tv/d.txt', MEM, 'PUT', 'tv')).status));
  t.equal((await get(app.url, '/memfs/tv/d.txt')).status, 401, 'a domain\'s folder is not $none\'s');
  t.equal((await get(app.url, '/memfs/tv/d.txt', basic('tv-viewer', VIEWER_PW))).text, 'tv', 'its domain\'s user reads it');
  t.equal((await get(app.url, '/memfs/other/c.txt')).text, 'other', 'other folders stay $none\'s');
});

t.test('a user asks for its own session tokens only', async (t) => {
  const app = await startApp(t, { config: { api: { auth: { enable: true, username: 'admin', password: 'admin-pw', jwt: { secret: 'reads-test-jwt-secret-0123456789' } } }, iam: { enable: true } } });
  const admin = (await request(app.url, 'POST', '/api/login', { body: { username: 'admin', password: 'admin-pw' } })).body.access_token as string;
  const api = [{ types: ['api'], resource: '/api/v3/session/token/*', actions: ['PUT'] }];
  for (const name of ['one', 'two']) {
    const u = { name, auth: { api: { userpass: { enable: true, password: `${name}-password-1234` } }, services: { session: [`${name}-session-secret-123456`] } }, policies: api };
    t.equal((await app.request('POST', '/api/v3/iam/user', { body: u, token: admin })).status, 200);
  }
  const login = await request(app.url, 'POST', '/api/login', { body: { username: 'one', password: 'one-password-1234' } });
  t.equal(login.status, 200, login.text);
  const token = login.body.access_token as string;
  const own = await app.request('PUT', '/api/v3/session/token/one', { body: [{}], token });
  t.equal(own.status, 200, own.text);
  t.ok(own.body[0].token.split('.').length === 3, 'a JWT');
  t.equal((await app.request('PUT', '/api/v3/session/token/two', { body: [{}], token })).status, 403, 'not another\'s');
});
