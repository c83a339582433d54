import t from 'tap';
import { readFile, writeFile } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request, startApp, type TestApp } from '../../helpers/app.ts';
import { startCli } from '../../helpers/cli.ts';
import { checkKey, checkPassword } from '../../../plugins/iam/secrets.ts';

/*
 * Issue 49, the users' floor: `/api/v3/iam/user` on the real service, as the reference's successor
 * answers it. Secrets are stored hashed (the file holds none of them) and never answered ("" in
 * their place, and a "" written back keeps the stored one, so a GET body PUT back changes
 * nothing); bad input is a 400 with an Error body naming the field; the bounds; the config file's
 * API user and `$anon` are no stored users; users survive a restart (SIGTERM, a new OS process).
 */

const PASSWORD = 'correct horse battery staple';
const TOKEN = 'f3a9c2e17b5d4068a1c9e2f4';
const alice = {
  name: 'alice', alias: 'Customer A', unknown_field: 'ignored',
  auth: { api: { userpass: { enable: true, password: PASSWORD } }, services: { token: [TOKEN], basic: ['basic-secret-0123456789'] } },
  policies: [{ types: ['rtmp', 'SRT'], resource: 'live/customer-a/*', actions: ['PLAY', 'PUBLISH'] }],
};
const usersFile = (app: TestApp) => join(app.dir, 'db', 'plugins', 'iam', 'users.json');
const stored = async (app: TestApp, name: string) => (JSON.parse(await readFile(usersFile(app), 'utf8')) as { users: Array<{ name: string; auth: { api: { userpass: { hash: string } }; services: { token: string[] } } }> }).users.find((u) => u.name === name)!;

t.test('create, read, list, replace, policies, delete; secrets hashed and never answered', async (t) => {
  const app = await startApp(t, { config: { iam: { enable: true } } });
  const made = await app.request('POST', '/api/v3/iam/user', { body: alice });
  t.equal(made.status, 200, made.text);
  t.match(made.body, { name: 'alice', alias: 'Customer A', superuser: false, auth: { api: { userpass: { enable: true, password: '' } }, services: { token: [''], basic: [''], session: [] } } });
  t.same(made.body.policies, [{ domain: '$none', types: ['rtmp', 'srt'], resource: 'live/customer-a/*', actions: ['PLAY', 'PUBLISH'] }], 'domain $none, types lower case');
  t.notOk('unknown_field' in made.body, 'unknown fields ignored');

  const text = await readFile(usersFile(app), 'utf8');
  t.notOk(text.includes(PASSWORD) || text.includes(TOKEN) || text.includes('basic-secret'), 'no secret in the file');
  const s = await stored(app, 'alice');
  t.ok(await checkPassword(PASSWORD, s.auth.api.userpass.hash), 'the password is a scrypt hash of it');
  t.ok(checkKey(TOKEN, s.auth.services.token[0]!), 'the token a salted hash of it');
  t.notOk(checkKey('another', s.auth.services.token[0]!));

  const list = await app.request('GET', '/api/v3/iam/user');
  t.same(list.body.map((u: { name: string }) => u.name), ['alice', '$anon'], '$anon last');
  t.notOk(JSON.stringify(list.body).includes(TOKEN), 'no secret in the list');
  const got = await app.request('GET', '/api/v3/iam/user/alice');
  t.same(got.body, made.body, 'read as created');

  const back = await app.request('PUT', '/api/v3/iam/user/alice', { body: { ...got.body, alias: 'A' } });
  t.equal(back.status, 200, back.text);
  t.equal(back.body.alias, 'A');
  const after = await stored(app, 'alice');
  t.equal(after.auth.api.userpass.hash, s.auth.api.userpass.hash, 'the password kept by ""');
  t.equal(after.auth.services.token[0], s.auth.services.token[0], 'the token kept by ""');

  const pol = await app.request('PUT', '/api/v3/iam/user/alice/policy', { body: [{ domain: 'tv', types: ['process'], resource: 'news-*', actions: ['read'] }] });
  t.equal(pol.status, 200, pol.text);
  t.same(pol.body, [{ domain: 'tv', types: ['process'], resource: 'news-*', actions: ['read'] }]);
  t.same((await app.request('GET', '/api/v3/iam/user/alice')).body.policies, pol.body);

  const renamed = await app.request('PUT', '/api/v3/iam/user/alice', { body: { name: 'alice2' } });
  t.equal(renamed.body.name, 'alice2');
  t.equal((await app.request('GET', '/api/v3/iam/user/alice')).status, 404, 'the old name is gone');
  const del = await app.request('DELETE', '/api/v3/iam/user/alice2');
  t.equal(del.status, 200);
  t.equal(del.body, 'OK');
  const again = await app.request('DELETE', '/api/v3/iam/user/alice2');
  t.equal(again.status, 404);
  t.match(again.body, { code: 404, message: 'Not Found', details: ["no user 'alice2'"] });
});

t.test('bad input: a 400 naming the field, stored users untouched', async (t) => {
  const app = await startApp(t, { config: { iam: { enable: true, max_users: 2, max_policies: 2 }, api: { auth: { enable: true, username: 'admin', password: 'pw', jwt: { secret: 'iam-test-jwt-secret-0123456789' } } } } });
  const token = (await app.request('POST', '/api/login', { body: { username: 'admin', password: 'pw' } })).body.access_token as string;
  const post = (body: unknown) => app.request('POST', '/api/v3/iam/user', { body, token });
  t.equal((await post({ name: 'keep' })).status, 200);
  const cases: Array<[unknown, number, RegExp]> = [
    [{ name: 'keep' }, 400, /exists/],
    [{ name: 'admin' }, 400, /reserved/],
    [{ name: '$anon' }, 400, /name must match/],
    [{ name: '-x' }, 400, /name/],
    [{ name: 'p', policies: [{ types: ['ftp'], resource: 'a', actions: ['GET'] }] }, 400, /policies\.0: unknown type 'ftp'/],
    [{ name: 'p', policies: [{ types: ['rtmp'], resource: 'a[', actions: ['PLAY'] }] }, 400, /policies\.0: .*without its \]/],
    [{ name: 'p', policies: [1, 2, 3].map(() => ({ types: ['rtmp'], resource: 'a', actions: ['PLAY'] })) }, 400, /at most 2/],
    [{ name: 'p', auth: { services: { token: [''] } } }, 400, /auth\.services\.token\.0: an empty secret/],
    [{ name: 'p', auth: { api: { userpass: { enable: true } } } }, 400, /userpass\.password: needed/],
    [null, 400, /./],
  ];
  for (const [body, status, detail] of cases) {
    const r = await post(body);
    t.equal(r.status, status, `${JSON.stringify(body)?.slice(0, 60)}: ${status}`);
    t.match(r.body, { code: status, message: String, details: Array }, 'an Error body');
    t.match(JSON.stringify(r.body.details), detail, 'naming the field');
  }
  t.equal((await post({ name: 'second' })).status, 200);
  const over = await post({ name: 'third' });
  t.equal(over.status, 429, 'iam.max_users');
  t.same((await app.request('GET', '/api/v3/iam/user', { token })).body.map((u: { name: string }) => u.name), ['keep', 'second', '$anon'], 'nothing else stored');
  t.equal((await app.request('DELETE', '/api/v3/iam/user/$anon', { token })).status, 400, '$anon cannot go');
  t.equal((await app.request('GET', '/api/v3/iam/user')).status, 401, 'the routes are the API login\'s');
});

t.test('users survive a restart (SIGTERM, a new process)', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'iam-restart-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const config = { db: { dir }, iam: { enable: true } };
  const first = await startCli(t, config);
  t.equal((await request(first.url, 'POST', '/api/v3/iam/user', { body: alice })).status, 200);
  t.equal((await request(first.url, 'PUT', '/api/v3/iam/user/$anon/policy', { body: [] })).status, 200, '$anon may read nothing');
  const before = (await request(first.url, 'GET', '/api/v3/iam/user/alice')).body;
  const stop = async (child: typeof first.child) => {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  await stop(first.child);
  const second = await startCli(t, config);
  const got = await request(second.url, 'GET', '/api/v3/iam/user/alice');
  t.equal(got.status, 200);
  t.same(got.body, before, 'the same user, policies and (hidden) secrets');
  const anon = async (url: string) => (await request(url, 'GET', '/api/v3/iam/user/$anon')).body.policies;
  t.same(await anon(second.url), [], '$anon\'s narrowed policies kept (not given the defaults again)');
  await stop(second.child);
  // a store written before $anon had policies of its own: anyone reads the public mounts, as then
  const file = join(dir, 'plugins', 'iam', 'users.json');
  const old = JSON.parse(await readFile(file, 'utf8')) as { version?: number };
  delete old.version;
  await writeFile(file, JSON.stringify(old));
  const third = await startCli(t, config);
  t.same(await anon(third.url), [{ domain: '$none', types: ['fs'], resource: '/**', actions: ['GET', 'HEAD', 'OPTIONS'] }], 'an old store\'s $anon gets the defaults');
  t.same((await request(third.url, 'GET', '/api/v3/iam/user/alice')).body, before, 'its users as they were');
});

t.test('requests at once: one name is taken once, a user gone meanwhile is not written back', async (t) => {
  const app = await startApp(t, { config: { iam: { enable: true } } });
  const body = { name: 'twin', auth: { api: { userpass: { enable: true, password: PASSWORD } } } };
  const both = await Promise.all([1, 2].map(() => app.request('POST', '/api/v3/iam/user', { body })));
  t.same(both.map((r) => r.status).sort(), [200, 400], 'one created, the other told it exists');
  const [put, del] = await Promise.all([
    app.request('PUT', '/api/v3/iam/user/twin', { body: { auth: { api: { userpass: { password: 'a new one' } } } } }),
    app.request('DELETE', '/api/v3/iam/user/twin'),
  ]);
  t.equal(del.status, 200);
  t.equal(put.status, 404, 'the update of a user deleted while its password was hashed');
  t.same((await app.request('GET', '/api/v3/iam/user')).body.map((u: { name: string }) => u.name), ['$anon']);
  t.equal((await app.request('PUT', '/api/v3/iam/user/$anon', { body: { auth: { api: { userpass: { enable: true, password: 'x' } } } } })).status, 400, '$anon has policies only');
});

t.test('password checks take turns: at most two at once, a bounded queue', async (t) => {
  const { hashPassword, checkPassword: check, MAX_CHECKS, MAX_WAITING } = await import('../../../plugins/iam/secrets.ts');
  const hash = await hashPassword('pw');
  const all = Array.from({ length: MAX_CHECKS + MAX_WAITING + 3 }, (_, i) => check(i === 0 ? 'pw' : 'no', hash).then((ok) => ({ ok }), (err: Error) => ({ err: err.message })));
  const out = await Promise.all(all);
  t.same(out[0], { ok: true }, 'the first checks');
  t.equal(out.filter((o) => 'err' in o).length, 3, 'beyond the turns and the queue: refused at once');
  t.match(out.find((o) => 'err' in o), { err: /too many logins at once/ });
  t.equal(out.filter((o) => 'ok' in o && o.ok === false).length, MAX_CHECKS + MAX_WAITING - 1, 'the others answered in turn');
});

t.test('a hand-edited users.json: a user without a valid name stops the start, junk secret lists are read as none', async (t) => {
  const { parseUsers } = await import('../../../plugins/iam/users.ts');
  t.throws(() => parseUsers({ users: [{ name: '-bad' }] }, 'users.json'), /users\[0\] has no valid name/);
  t.throws(() => parseUsers({}, 'users.json'), /no "users" list/);
  const [u] = parseUsers({ users: [{ name: 'x', auth: { services: { token: 'not a list', basic: [1, 'h'] } } }] }, 'users.json').users;
  t.same(u!.auth.services, { basic: ['h'], token: [], session: [] });
  t.equal(u!.tokens_since, 0, 'a user stored before tokens_since: its tokens stand until they expire');
  t.equal(parseUsers({ users: [{ name: 'y', tokens_since: 1.5 }] }, 'users.json').users[0]!.tokens_since, 0, 'junk read as none');
  t.equal(parseUsers({ users: [{ name: 'z', tokens_since: 1_700_000_000_123 }] }, 'users.json').users[0]!.tokens_since, 1_700_000_000_123);
  // created_at tells a process's maker from a later user of its name: unknown is 0, never the load's time
  t.equal(u!.created_at, 0, 'a user stored without created_at: as old as can be (its processes still its own after a restart)');
  t.equal(parseUsers({ users: [{ name: 'w', created_at: 1_700_000_000 }] }, 'users.json').users[0]!.created_at, 1_700_000_000);
});
