import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request, startApp } from '../../helpers/app.ts';
import { startCli } from '../../helpers/cli.ts';
import { waitFor } from '../../helpers/wait.ts';
import { SseClient } from '../events/sse-client.ts';

/*
 * Issue 49, the API floor: an IAM user logs in at POST /api/login with its own password and its
 * token opens only what its `api` policies allow (403 with an Error body otherwise); the IAM routes
 * stay the superusers'; a path that is not canonical is refused before any policy; a deleted
 * user's or a disabled login's tokens die at once; wrong passwords are slowed per user; the config
 * file's user (the superuser) is unchanged; and a service started again without the iam plugin
 * takes none of its users' tokens (they never act as the superuser).
 */

const JWT = 'iam-login-jwt-secret-0123456789abcdef';
const API = { auth: { enable: true, username: 'admin', password: 'admin-pw', jwt: { secret: JWT } } };
const viewer = {
  name: 'viewer', auth: { api: { userpass: { enable: true, password: 'viewer password' } } },
  policies: [
    { types: ['api'], resource: '/api/v3/process', actions: ['GET'] },
    { types: ['api'], resource: '/api/v3/process/cam-*/**', actions: ['GET'] },
    { domain: 'tv', types: ['api'], resource: '/api/v3/config', actions: ['GET'] },
    { types: ['process'], resource: 'cam-*', actions: ['read'] },
  ],
};
const login = async (url: string, username: string, password: string) => request(url, 'POST', '/api/login', { body: { username, password } });

t.test('an IAM user\'s token opens what its api policies allow, nothing else', async (t) => {
  const app = await startApp(t, { config: { api: API, iam: { enable: true } } });
  const admin = (await login(app.url, 'admin', 'admin-pw')).body.access_token as string;
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: viewer, token: admin })).status, 200);
  const l = await login(app.url, 'viewer', 'viewer password');
  t.equal(l.status, 200, l.text);
  const token = l.body.access_token as string;
  const as = (method: string, path: string, body?: unknown) => app.request(method, path, { token, ...(body ? { body } : {}) });

  t.equal((await as('GET', '/api/v3/process')).status, 200, 'an allowed GET');
  t.equal((await as('GET', '/api/v3/process/cam-1/state')).status, 404, 'allowed, and the route answers (no such process)');
  const denied = await as('GET', '/api/v3/process/other/state');
  t.equal(denied.status, 403, 'a path no policy names');
  t.match(denied.body, { code: 403, message: 'Forbidden', details: ['no policy allows GET /api/v3/process/other/state'] });
  t.equal((await as('POST', '/api/v3/process', { id: 'x' })).status, 403, 'a method no policy names');
  t.equal((await as('GET', '/api/v3/config')).status, 403, 'a policy of another domain');
  t.equal((await as('GET', '/api/v3/config?domain=tv')).status, 200, 'in its domain');
  t.equal((await as('GET', '/api/v3/iam/user')).status, 403, 'the IAM routes need an api policy too');
  t.equal((await as('POST', '/api/graph/query', { query: '{ processes { id } }' })).status, 403, 'GraphQL needs an api policy for its route');
  t.equal((await as('PUT', '/api/v3/iam/user/viewer', { superuser: true })).status, 403, 'no user raises its own rights');
  for (const p of ['/api/v3/process/cam-1/../../config', '/api/v3/process/cam-1/%2e%2e/x', '/api/v3/process//cam-1/state', '/api/v3/process/cam-1%2Fstate']) {
    t.equal((await as('GET', p)).status, 403, `not canonical: ${p}`);
  }
  t.equal((await app.request('GET', '/api/v3/config', { token: admin })).status, 200, 'the superuser as before');
  t.equal((await app.request('GET', '/api/v3/iam/user', { token: admin })).status, 200);

  const refresh = await app.request('GET', '/api/login/refresh', { token: l.body.refresh_token as string });
  t.equal(refresh.status, 200, 'refresh works for an IAM user');
  t.equal((await app.request('GET', '/api/v3/process', { token: refresh.body.access_token as string })).status, 200);

  t.equal((await app.request('PUT', '/api/v3/iam/user/viewer', { body: { auth: { api: { userpass: { enable: false } } } }, token: admin })).status, 200);
  t.equal((await as('GET', '/api/v3/process')).status, 401, 'a login turned off ends its tokens');
  t.equal((await app.request('PUT', '/api/v3/iam/user/viewer', { body: { auth: { api: { userpass: { enable: true } } } }, token: admin })).status, 200);
  t.equal((await as('GET', '/api/v3/process')).status, 401, 'on again, the tokens of before stay ended');
  const again = await login(app.url, 'viewer', 'viewer password');
  t.equal((await app.request('GET', '/api/v3/process', { token: again.body.access_token as string })).status, 200, 'a new login works');
  t.equal((await app.request('DELETE', '/api/v3/iam/user/viewer', { token: admin })).status, 200);
  t.equal((await app.request('GET', '/api/v3/process', { token: again.body.access_token as string })).status, 401, 'a deleted user\'s token is no token');
});

t.test('a token stands only for the user it was issued to, as it was: a new password, a new name or the name made again ends it', async (t) => {
  const app = await startApp(t, { config: { api: API, iam: { enable: true } } });
  const admin = (await login(app.url, 'admin', 'admin-pw')).body.access_token as string;
  const put = async (name: string, body: unknown) => (await app.request('PUT', `/api/v3/iam/user/${name}`, { body, token: admin })).status;
  const works = async (token: unknown) => (await app.request('GET', '/api/v3/process', { token: token as string })).status;
  const refreshed = async (refresh: unknown) => (await app.request('GET', '/api/login/refresh', { token: refresh as string })).status;
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: viewer, token: admin })).status, 200);

  const first = (await login(app.url, 'viewer', 'viewer password')).body;
  t.equal(await works(first.access_token), 200);
  t.equal(await put('viewer', { policies: viewer.policies, alias: 'v' }), 200);
  t.equal(await works(first.access_token), 200, 'a change of policies or alias keeps the tokens');
  t.equal(await put('viewer', { auth: { api: { userpass: { password: '' } } } }), 200);
  t.equal(await works(first.access_token), 200, 'the stored password written back as "" is no change');

  t.equal(await put('viewer', { auth: { api: { userpass: { password: 'a new password' } } } }), 200);
  t.equal(await works(first.access_token), 401, 'a new password ends the access token');
  t.equal(await refreshed(first.refresh_token), 401, 'and the refresh token');
  t.equal((await login(app.url, 'viewer', 'viewer password')).status, 401, 'the old password is refused');
  const second = (await login(app.url, 'viewer', 'a new password')).body;
  t.equal(await works(second.access_token), 200, 'a login with the new one works');
  t.equal(await refreshed(second.refresh_token), 200);

  t.equal((await app.request('DELETE', '/api/v3/iam/user/viewer', { token: admin })).status, 200);
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: { ...viewer, auth: { api: { userpass: { enable: true, password: 'a new password' } } } }, token: admin })).status, 200);
  t.equal(await works(second.access_token), 401, 'a user made again under the name is another user: the old tokens stay ended');
  t.equal(await refreshed(second.refresh_token), 401);

  const third = (await login(app.url, 'viewer', 'a new password')).body;
  t.equal(await works(third.access_token), 200);
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: { ...viewer, name: 'other', auth: { api: { userpass: { enable: true, password: 'other password' } } } }, token: admin })).status, 200);
  t.equal(await put('viewer', { name: 'renamed' }), 200);
  t.equal(await put('other', { name: 'viewer' }), 200, 'another user takes the name');
  t.equal(await works(third.access_token), 401, 'a token of the name before does not act as the user who took it');
  t.equal(await refreshed(third.refresh_token), 401);
  const renamed = (await login(app.url, 'renamed', 'a new password')).body;
  t.equal(await works(renamed.access_token), 200, 'the renamed user logs in under its new name');
});

t.test('logins: wrong passwords are refused and slowed per user; unknown names look alike', async (t) => {
  // a guesser from many addresses: each attempt from another (a trusted proxy names it), so the
  // auth plugin's slowing per address never applies and only the one per user can
  // and a refusal long enough that no busy box ends it within the test
  const app = await startApp(t, { config: { api: { ...API, access: { trusted_proxies: ['127.0.0.1/32'] } }, iam: { enable: true, fail_delay_ms: 600_000, fail_delay_max_ms: 600_000 } } });
  let n = 0;
  const from = () => ({ 'x-forwarded-for': `203.0.113.${++n}` });
  const login = async (url: string, username: string, password: string) => request(url, 'POST', '/api/login', { body: { username, password }, headers: from() });
  const admin = (await login(app.url, 'admin', 'admin-pw')).body.access_token as string;
  await app.request('POST', '/api/v3/iam/user', { body: viewer, token: admin });
  await app.request('POST', '/api/v3/iam/user', { body: { name: 'nologin', auth: { api: { userpass: { enable: false, password: 'pw' } } } }, token: admin });
  const wrong = await login(app.url, 'viewer', 'nope');
  t.equal(wrong.status, 401);
  t.match(wrong.body.details, [/invalid username or password/]);
  const slowed = await login(app.url, 'viewer', 'viewer password');
  t.equal(slowed.status, 401, 'the right password right after a wrong one waits its turn');
  t.match(slowed.body.details, [/invalid username or password/], 'told as a wrong password (no guesser learns of the lock)');
  for (const [u, p] of [['nobody', 'x'], ['nologin', 'pw']]) {
    const r = await login(app.url, u!, p!);
    t.equal(r.status, 401, `${u}: refused`);
    t.match(r.body.details, [/invalid username or password/], 'as for a wrong password');
  }
  t.equal((await login(app.url, 'admin', 'admin-pw')).status, 200, 'the superuser logs in as before');
});

t.test('without the iam plugin an IAM user\'s token opens nothing (a new process, iam off)', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'iam-off-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const first = await startCli(t, { db: { dir }, api: API, iam: { enable: true } });
  const admin = (await login(first.url, 'admin', 'admin-pw')).body.access_token as string;
  await request(first.url, 'POST', '/api/v3/iam/user', { body: { ...viewer, superuser: true }, token: admin });
  const token = (await login(first.url, 'viewer', 'viewer password')).body.access_token as string;
  t.equal((await request(first.url, 'GET', '/api/v3/config', { token })).status, 200, 'an IAM superuser may all');
  const exited = new Promise((r) => first.child.once('exit', r));
  first.child.kill('SIGTERM');
  await exited;
  const second = await startCli(t, { db: { dir }, api: API, iam: { enable: false } });
  t.equal((await request(second.url, 'GET', '/api/v3/config', { token })).status, 401, 'the same token, iam off: refused');
  t.equal((await login(second.url, 'viewer', 'viewer password')).status, 401, 'and no login');
});

/** A process that runs nothing (order stop). */
const proc = (id: string, domain?: string) => ({
  id, autostart: false, ...(domain ? { domain } : {}),
  input: [{ id: 'in', address: 'testsrc=size=64x64:rate=1', options: ['-f', 'lavfi'] }], output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
});

t.test('process policies: the list shows, a create makes and a route of one process acts on only what they allow', async (t) => {
  const app = await startApp(t, { config: { api: API, iam: { enable: true } } });
  const admin = (await login(app.url, 'admin', 'admin-pw')).body.access_token as string;
  for (const p of [proc('cam-1'), proc('other'), proc('cam-tv', 'tv')]) t.equal((await app.request('POST', '/api/v3/process', { body: p, token: admin })).status, 200);
  const user = {
    name: 'op', auth: { api: { userpass: { enable: true, password: 'op password' } } },
    policies: [
      { types: ['api'], resource: '/api/v3/process{,/**}', actions: ['*'] },
      { domain: 'tv', types: ['api'], resource: '/api/v3/process{,/**}', actions: ['*'] },
      { types: ['process'], resource: 'cam-*', actions: ['read', 'write'] },
      { domain: 'tv', types: ['process'], resource: 'cam-*', actions: ['read', 'command'] },
    ],
  };
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: user, token: admin })).status, 200);
  const token = (await login(app.url, 'op', 'op password')).body.access_token as string;
  const as = (method: string, path: string, body?: unknown) => app.request(method, path, { token, ...(body ? { body } : {}) });
  const ids = async (q = '') => ((await as('GET', `/api/v3/process${q}`)).body as Array<{ id: string }>).map((p) => p.id).sort();

  t.same(await ids(), ['cam-1', 'cam-tv'], 'the list: only what process policies let it read');
  t.same(await ids('?domain=tv'), ['cam-tv'], '?domain= selects a domain');
  t.same(((await app.request('GET', '/api/v3/process', { token: admin })).body as unknown[]).length, 3, 'the superuser sees all');
  t.equal((await as('GET', '/api/v3/process/other')).status, 403, 'a process no policy names');
  t.equal((await as('GET', '/api/v3/process/cam-1/config')).status, 200);
  t.equal((await as('GET', '/api/v3/process/cam-tv/state?domain=tv')).status, 200, 'in its domain');
  t.equal((await as('PUT', '/api/v3/process/cam-1/command', { command: 'stop' })).status, 403, 'no command on cam-1 in $none');
  t.equal((await as('PUT', '/api/v3/process/cam-tv/command?domain=tv', { command: 'stop' })).status, 200, 'command in tv');
  t.equal((await as('DELETE', '/api/v3/process/cam-tv?domain=tv')).status, 403, 'no write in tv');
  t.equal((await as('PUT', '/api/v3/process/other/metadata/x', { a: 1 })).status, 403, 'the routes of one process under it too');
  const made = await as('POST', '/api/v3/process', proc('cam-new'));
  t.equal(made.status, 200, made.text);
  const refused = await as('POST', '/api/v3/process', proc('someone-else'));
  t.equal(refused.status, 403, 'a create of an id no policy names');
  t.match(refused.body, { code: 403, message: 'Forbidden' });
  t.equal((await as('POST', '/api/v3/process', proc('cam-x', 'radio'))).status, 403, 'nor in another domain');
  t.same(await ids(), ['cam-1', 'cam-new', 'cam-tv']);
  t.equal((await as('PUT', '/api/v3/process/cam-new', { ...proc('someone-else') })).status, 403, 'no rename to an id no policy names');
  t.equal((await as('PUT', '/api/v3/process/cam-new', { ...proc('cam-new', 'radio') })).status, 403, 'nor a move to another domain');
  t.equal((await as('PUT', '/api/v3/process/cam-new', { ...proc('cam-renamed') })).status, 200, 'a rename within its policies');
  t.same(await ids(), ['cam-1', 'cam-renamed', 'cam-tv']);
  t.equal((await app.request('GET', '/api/v3/process/cam-tv/config', { token: admin })).body.domain, 'tv', 'the domain is part of the config');
  t.notOk('domain' in (await app.request('GET', '/api/v3/process/cam-1/config', { token: admin })).body, 'and absent when none (the reference\'s shape)');
  t.equal((await as('GET', '/api/v3/events')).status, 403, 'the event stream filters nothing yet: the superusers\'');
});

t.test('the event stream of an IAM user: events of the processes it may read, nothing else', async (t) => {
  const app = await startApp(t, { config: { api: API, iam: { enable: true } } });
  const admin = (await login(app.url, 'admin', 'admin-pw')).body.access_token as string;
  const user = {
    name: 'watcher', auth: { api: { userpass: { enable: true, password: 'watcher password' } } },
    policies: [{ types: ['api'], resource: '/api/v3/events', actions: ['GET'] }, { types: ['process'], resource: 'cam-*', actions: ['read'] }],
  };
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: user, token: admin })).status, 200);
  const token = (await login(app.url, 'watcher', 'watcher password')).body.access_token as string;
  const mine = await SseClient.open(`${app.url}/api/v3/events`, { authorization: `Bearer ${token}` });
  const all = await SseClient.open(`${app.url}/api/v3/events`, { authorization: `Bearer ${admin}` });
  t.teardown(() => { mine.close(); all.close(); });
  t.equal(mine.status, 200, 'its api policy opens the stream');
  for (const p of [proc('cam-1'), proc('other'), proc('cam-2')]) t.equal((await app.request('POST', '/api/v3/process', { body: p, token: admin })).status, 200);
  await waitFor(() => all.events.filter((e) => e.type === 'process.added').length === 3, { what: 'the superuser sees three processes added' });
  await waitFor(() => mine.events.filter((e) => e.type === 'process.added').length === 2, { what: 'the user sees two' });
  t.same(mine.events.map((e) => e.subject.process).filter(Boolean).sort(), ['cam-1', 'cam-2'], 'only its processes\' events');
  t.ok(mine.events.every((e) => e.subject.process !== undefined), 'no event of the service, the files or other processes');
  t.ok(all.events.some((e) => e.subject.process === undefined) || all.events.length >= 3, 'the superuser\'s stream as before');
  t.equal((await app.request('GET', '/api/v3/events/webhooks', { token })).status, 403, 'the webhooks\' state is the superusers\'');
  // a stream open when its token ends (a new password) shows nothing from then on
  t.equal((await app.request('PUT', '/api/v3/iam/user/watcher', { body: { auth: { api: { userpass: { password: 'a new one' } } } }, token: admin })).status, 200);
  const before = mine.events.length;
  t.equal((await app.request('POST', '/api/v3/process', { body: proc('cam-3'), token: admin })).status, 200);
  await waitFor(() => all.events.some((e) => e.type === 'process.added' && e.subject.process === 'cam-3') || undefined, { what: 'the superuser sees cam-3 added' });
  await new Promise((r) => setTimeout(r, 200));
  t.equal(mine.events.length, before, 'the stream of the ended token sees no more events');
});
