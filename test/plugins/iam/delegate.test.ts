import t from 'tap';
import { globWithin, policyWithin, uncovered } from '../../../plugins/iam/delegate.ts';
import { request, startApp } from '../../helpers/app.ts';

/*
 * Issue 49.2, the `iam` type: a user that is no superuser manages the users its `iam` policies
 * allow, within its own rights. The containment rule (pure), then the real service: what a
 * delegate lists, reads, makes, changes and deletes, and each way it could raise rights refused
 * (a policy beyond its own, a superuser, taking over a user that holds more, raising itself,
 * renaming out of its names).
 */

t.test('a pattern inside another: conservative, never a false yes', async (t) => {
  const yes: [string, string][] = [['live/a/cam', 'live/a/*'], ['live/a/*', 'live/a/**'], ['live/a/{x,y}/*', 'live/a/**'], ['*', '*'], ['tv', '*'], ['$none', '$none'], ['x', '**'], ['anything/**', '**']];
  const no: [string, string][] = [['live/**', 'live/a/**'], ['live/a/*', 'live/*'], ['live/a/x/y', 'live/a/*'], ['a\\*{x,y}', 'a\\**'], ['live/b/cam', 'live/a/**'], ['tv', '$none'], ['*', 'tv'], ['[', '**x']];
  for (const [p, g] of yes) t.ok(globWithin(p, g), `${p} inside ${g}`);
  for (const [p, g] of no) t.notOk(globWithin(p, g), `${p} not inside ${g}`);
  const own = { domain: '$none', types: ['rtmp', 'srt'], resource: 'live/a/**', actions: ['play', 'PUBLISH'] };
  t.ok(policyWithin({ domain: '$none', types: ['rtmp'], resource: 'live/a/x', actions: ['PLAY'] }, 'rtmp', own), 'actions compared without case');
  t.notOk(policyWithin({ domain: '$none', types: ['rtmp'], resource: 'live/a/x', actions: ['*'] }, 'rtmp', own), 'all actions are more than two');
  t.ok(policyWithin({ domain: '$none', types: ['rtmp'], resource: 'live/a/x', actions: ['*'] }, 'rtmp', { ...own, actions: ['any'] }), 'any covers all');
  t.notOk(policyWithin({ domain: '$none', types: ['webrtc'], resource: 'live/a/x', actions: ['PLAY'] }, 'webrtc', own), 'another type');
  t.notOk(policyWithin({ domain: 'tv', types: ['rtmp'], resource: 'live/a/x', actions: ['PLAY'] }, 'rtmp', own), 'another domain');
  t.equal(uncovered([{ domain: '$none', types: ['rtmp', 'webrtc'], resource: 'live/a/x', actions: ['PLAY'] }], [own]), 'webrtc PLAY on live/a/x in $none', 'each type of a policy needs cover');
  t.equal(uncovered([], []), undefined, 'nothing to cover');
});

const JWT = 'iam-delegate-jwt-secret-0123456789abcdef';
const API = { auth: { enable: true, username: 'admin', password: 'admin-pw', jwt: { secret: JWT } } };
const manager = {
  name: 'manager', auth: { api: { userpass: { enable: true, password: 'manager password' } } },
  policies: [
    { types: ['api'], resource: '/api/v3/iam/**', actions: ['*'] },
    { types: ['api'], resource: '/api/v3/iam/user', actions: ['GET', 'POST'] },
    { types: ['iam'], resource: 'customer-a-*', actions: ['read', 'write'] },
    { types: ['rtmp', 'srt'], resource: 'live/customer-a/**', actions: ['PLAY', 'PUBLISH'] },
    { types: ['process'], resource: 'customer-a-*', actions: ['read'] },
  ],
};
const customer = (name: string, policies: object[] = [{ types: ['rtmp'], resource: 'live/customer-a/cam', actions: ['PLAY'] }]) => ({
  name, auth: { api: { userpass: { enable: true, password: `${name} password` } } }, policies,
});

t.test('a delegate manages the users its iam policies name, never beyond its own rights', async (t) => {
  const app = await startApp(t, { config: { api: API, iam: { enable: true } } });
  const login = async (u: string, p: string) => (await request(app.url, 'POST', '/api/login', { body: { username: u, password: p } })).body.access_token as string;
  const admin = await login('admin', 'admin-pw');
  for (const u of [manager, customer('customer-a-cam'), customer('customer-b-cam', [{ types: ['rtmp'], resource: 'live/customer-b/**', actions: ['PLAY'] }]),
    customer('customer-a-big', [{ types: ['api'], resource: '/api/v3/**', actions: ['*'] }]), { ...customer('customer-a-root'), superuser: true }]) {
    const r = await app.request('POST', '/api/v3/iam/user', { body: u, token: admin });
    t.equal(r.status, 200, r.text);
  }
  const token = await login('manager', 'manager password');
  const as = (method: string, path: string, body?: unknown) => app.request(method, path, { token, ...(body !== undefined ? { body } : {}) });

  const list = await as('GET', '/api/v3/iam/user');
  t.equal(list.status, 200, list.text);
  t.same(list.body.map((u: { name: string }) => u.name).sort(), ['customer-a-big', 'customer-a-cam', 'customer-a-root'], 'the list shows the users it may read');
  t.equal((await as('GET', '/api/v3/iam/user/customer-a-cam')).status, 200, 'one it may read');
  t.equal((await as('GET', '/api/v3/iam/user/customer-b-cam')).status, 403, 'one it may not');

  const made = await as('POST', '/api/v3/iam/user', customer('customer-a-new', [{ types: ['rtmp'], resource: 'live/customer-a/new', actions: ['PUBLISH'] }]));
  t.equal(made.status, 200, `a user within its rights: ${made.text}`);
  const beyond = await as('POST', '/api/v3/iam/user', customer('customer-a-evil', [{ types: ['rtmp'], resource: 'live/**', actions: ['PLAY'] }]));
  t.equal(beyond.status, 403, 'a policy beyond its own');
  t.match(beyond.body, { code: 403, details: [/beyond the caller's own: rtmp PLAY on live\/\*\*/] });
  t.equal((await as('POST', '/api/v3/iam/user', customer('customer-a-api', [{ types: ['api'], resource: '/api/v3/iam/**', actions: ['*'] }]))).status, 200, 'a copy of its own api policy is within');
  t.equal((await as('POST', '/api/v3/iam/user', customer('customer-b-new'))).status, 403, 'a name it may not write');
  t.equal((await as('POST', '/api/v3/iam/user', { ...customer('customer-a-su'), superuser: true })).status, 403, 'a superuser');
  t.equal((await as('PUT', '/api/v3/iam/user/customer-a-root', { alias: 'x' })).status, 403, 'a superuser is not changed');
  t.equal((await as('PUT', '/api/v3/iam/user/customer-a-big', { auth: { api: { userpass: { enable: true, password: 'taken over' } } } })).status, 403,
    'a user that holds more is not taken over by a password');
  t.equal((await request(app.url, 'POST', '/api/login', { body: { username: 'customer-a-big', password: 'taken over' } })).status, 401, 'its password is unchanged');
  t.equal((await as('DELETE', '/api/v3/iam/user/customer-a-big')).status, 403, 'nor deleted');

  t.equal((await as('PUT', '/api/v3/iam/user/customer-a-new', { auth: { api: { userpass: { enable: true, password: 'a new password' } } } })).status, 200, 'a password of its user');
  t.ok(await login('customer-a-new', 'a new password'), 'which logs in');
  t.equal((await as('PUT', '/api/v3/iam/user/customer-a-new/policy', [{ types: ['srt'], resource: 'live/customer-a/new', actions: ['PLAY'] }])).status, 200, 'policies within');
  t.equal((await as('PUT', '/api/v3/iam/user/customer-a-new/policy', [{ types: ['process'], resource: '**', actions: ['read'] }])).status, 403, 'policies beyond');
  t.equal((await as('PUT', '/api/v3/iam/user/customer-a-new', { name: 'customer-b-new' })).status, 403, 'a rename out of its names');
  const bad = await as('PUT', '/api/v3/iam/user/customer-a-new/policy', [{ types: ['rtmp'], resource: 'live/customer-a/[', actions: ['PLAY'] }]);
  t.match(bad, { status: 400, body: { code: 400, details: [/^policies\.0: /] } }, 'a policy that does not compile: 400, as for a superuser');
  t.equal((await as('PUT', '/api/v3/iam/user/manager/policy', [{ types: ['iam'], resource: '**', actions: ['read', 'write'] }])).status, 403, 'itself: no raise');
  t.equal((await as('DELETE', '/api/v3/iam/user/customer-b-cam')).status, 403, 'a delete of a user it may not write');
  t.equal((await as('DELETE', '/api/v3/iam/user/customer-a-new')).status, 200, 'a delete of its user');

  const names = (await app.request('GET', '/api/v3/iam/user', { token: admin })).body.map((u: { name: string }) => u.name).sort();
  t.same(names, ['$anon', 'customer-a-api', 'customer-a-big', 'customer-a-cam', 'customer-a-root', 'customer-b-cam', 'manager'], 'the superuser sees every user, and only what was allowed changed');
  const big = await app.request('GET', '/api/v3/iam/user/customer-a-big', { token: admin });
  t.same(big.body.policies, [{ domain: '$none', types: ['api'], resource: '/api/v3/**', actions: ['*'] }], 'the bigger user is as it was');
});
