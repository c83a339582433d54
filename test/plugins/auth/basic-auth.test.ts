import t from 'tap';
import { startAuthApp, startOpenApp } from './helpers.ts';

const basic = (s: string) => ({ authorization: `Basic ${Buffer.from(s).toString('base64')}` });
const UNAUTH = { code: 401, message: 'Unauthorized', details: ['Unauthorized'] };

for (const enabled of [true, false]) {
  t.test(`basic auth service (api auth ${enabled ? 'on' : 'off'})`, async (t) => {
    const app = enabled ? await startAuthApp(t) : await startOpenApp(t);
    const put = (headers: Record<string, string>) => app.request('PUT', '/probe-basic/file.txt', { raw: 'data', headers });

    const ok = await put(basic('admin:s3cret:pass'));
    t.equal(ok.status, 200, 'right credentials (a colon in the password is fine)');
    t.equal(ok.text, 'OK');
    t.equal((await put({ authorization: `bAsIc ${Buffer.from('admin:s3cret:pass').toString('base64')}` })).status, 200, 'scheme is case-insensitive');

    for (const [name, headers] of [
      ['missing', {}],
      ['wrong password', basic('admin:wrong')],
      ['wrong user', basic('root:s3cret:pass')],
      ['no colon', basic('admins3cret:pass')],
      ['empty', { authorization: 'Basic ' }],
      ['bearer instead', { authorization: 'Bearer abc' }],
      ['prefix of password', basic('admin:s3cret:pas')],
    ] as const) {
      const r = await put(headers);
      t.equal(r.status, 401, name);
      t.same(r.body, UNAUTH, `${name}: body`);
      t.equal(r.headers.get('www-authenticate'), 'Basic realm=Restricted', `${name}: challenge`);
    }
    const bad = await put({ authorization: 'Basic %%%not-base64%%%' });
    t.equal(bad.status, 400, 'undecodable base64 is 400');
    t.equal(bad.body.code, 400);
  });
}
