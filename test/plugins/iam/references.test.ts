import t from 'tap';
import { request, startApp } from '../../helpers/app.ts';

/*
 * An input reference (`#<id>:output=<out>`) resolves to the other process's output address, which
 * then shows in the referencing process's command: a user could read another user's push URL (a
 * stream key) through it. A reference to a process the caller may not read is refused as if the
 * process did not exist (no telling which ids exist), at create and at update; the superuser's
 * references work as before.
 */

const JWT = 'iam-references-jwt-secret-0123456789ab';
const API = { auth: { enable: true, username: 'admin', password: 'admin-pw', jwt: { secret: JWT } } };
const user = (name: string) => ({
  name, auth: { api: { userpass: { enable: true, password: `${name} password` } } },
  policies: [
    { types: ['api'], resource: '/api/v3/process{,/**}', actions: ['GET', 'POST', 'PUT', 'DELETE'] },
    { types: ['process'], resource: `${name}-*`, actions: ['read', 'write', 'command'] },
  ],
});
const proc = (id: string, input: string, output = '-') => ({
  id, autostart: false, input: [{ id: 'in', address: input, options: input.startsWith('#') ? [] : ['-f', 'lavfi'] }],
  output: [{ id: 'out', address: output, options: ['-f', output === '-' ? 'null' : 'flv'] }],
});

t.test('an input references only processes the caller may read', async (t) => {
  const app = await startApp(t, { config: { api: API, iam: { enable: true } } });
  const login = async (u: string, p: string) => (await request(app.url, 'POST', '/api/login', { body: { username: u, password: p } })).body.access_token as string;
  const admin = await login('admin', 'admin-pw');
  for (const name of ['alice', 'bob']) t.equal((await app.request('POST', '/api/v3/iam/user', { body: user(name), token: admin })).status, 200);
  const alice = await login('alice', 'alice password');
  const bob = await login('bob', 'bob password');
  const KEY = 'rtmp://a.rtmp.example.com/live2/bob-SECRET-KEY-1234';
  t.equal((await app.request('POST', '/api/v3/process', { body: proc('bob-yt', 'testsrc2', KEY), token: bob })).status, 200);

  for (const ref of ['#bob-yt:output=out', '#bob-yt:output=nope', '#nobody:output=out']) {
    const r = await app.request('POST', '/api/v3/process', { body: proc('alice-ref', ref), token: alice });
    t.equal(r.status, 400, `${ref}: refused`);
    t.notOk(r.text.includes('SECRET'), 'no key in the answer');
    t.match(r.text, /unknown process/, `${ref}: as if it did not exist (${r.body.details})`);
  }
  t.equal((await app.request('POST', '/api/v3/process', { body: proc('alice-a', 'testsrc2'), token: alice })).status, 200);
  const put = await app.request('PUT', '/api/v3/process/alice-a', { body: proc('alice-a', '#bob-yt:output=out'), token: alice });
  t.equal(put.status, 400, 'an update too');
  t.match(put.text, /unknown process 'bob-yt'/);

  // her own processes, and the superuser's references, as before
  t.equal((await app.request('POST', '/api/v3/process', { body: proc('alice-b', '#alice-a:output=out'), token: alice })).status, 200, 'her own process');
  t.equal((await app.request('POST', '/api/v3/process', { body: proc('admin-ref', '#bob-yt:output=out'), token: admin })).status, 200, 'the superuser references any');
  const state = await app.request('GET', '/api/v3/process/admin-ref/state', { token: admin });
  t.match(state.body.command, [/./], 'resolved');
  t.ok(state.body.command.includes(KEY), 'to the other output');
});
