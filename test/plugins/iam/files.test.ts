import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { send as sendWith } from './send.ts';

/*
 * Issue 49, the file mounts: a user's Basic password (`auth.services.basic`) writes to memfs what
 * its `fs` policies allow (the method on the mount path), with and without serving threads (a
 * thread takes only the mount's own credential and leaves a user's to main). A write its
 * policies do not allow is a 403, a wrong password a 401 as before; the mount's own credential
 * works as before; reads stay public.
 */

const SECRET = 'basic-secret-7c1e94a0b2d6';
const send = (url: string, method: string, path: string, authorization?: string, body?: string) => sendWith(url, method, path, authorization ? { authorization } : {}, body);
const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

for (const threads of [0, 2]) t.test(`memfs writes with a user's Basic password (${threads} serving threads)`, async (t) => {
  const app = await startApp(t, { config: { iam: { enable: true }, http: { threads }, storage: { memory: { auth: { enable: true, username: 'mem', password: 'mem-pw' } } } } });
  const user = { name: 'uploader', auth: { services: { basic: [SECRET] } }, policies: [{ types: ['fs'], resource: '/memfs/customer-a/**', actions: ['PUT', 'DELETE'] }] };
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: user })).status, 200);
  for (let i = 0; i < 4; i++) {
    const put = await send(app.url, 'PUT', `/memfs/customer-a/seg${i}.ts`, basic('uploader', SECRET), `data ${i}`);
    t.ok([200, 201, 204].includes(put.status), `a write its policy allows (${put.status} ${put.text.slice(0, 80)})`);
  }
  t.equal((await send(app.url, 'GET', '/memfs/customer-a/seg0.ts')).text, 'data 0', 'stored, and read without credentials as before');
  const other = await send(app.url, 'PUT', '/memfs/customer-b/x.ts', basic('uploader', SECRET), 'x');
  t.equal(other.status, 403, 'a path its policy does not name');
  t.match(other.text, /user uploader may not PUT \/memfs\/customer-b\/x\.ts/);
  t.equal((await send(app.url, 'PUT', '/memfs/customer-a/y.ts', basic('uploader', 'wrong'), 'y')).status, 401, 'a wrong password');
  t.equal((await send(app.url, 'PUT', '/memfs/customer-a/y.ts', basic('nobody', SECRET), 'y')).status, 401, 'a user that does not exist');
  t.equal((await send(app.url, 'DELETE', '/memfs/customer-a/seg0.ts', basic('uploader', SECRET))).status, 200, 'a delete its policy allows');
  t.ok([200, 201, 204].includes((await send(app.url, 'PUT', '/memfs/anywhere/z.ts', basic('mem', 'mem-pw'), 'z')).status), 'the mount\'s own credential as before');
  t.equal((await send(app.url, 'GET', '/memfs/customer-b/x.ts')).status, 404, 'the refused write stored nothing');
});
