import t from 'tap';
import { goArch } from '../../../core/http/build-info.ts';
import { startApp } from '../../helpers/app.ts';
import { rawRequest } from '../../plugins/memfs/fs-helpers.ts';

/** What restreamer-ui's client sends: fetch with a JSON Accept and, when logged in, a token. */
const UI = { accept: 'application/json', 'content-type': 'application/json' };

t.test('HEAD errors are status only: no body and no JSON content type', async (t) => {
  const app = await startApp(t);
  for (const path of ['/api/v3/fs/mem/missing.m3u8', '/api/v3/fs/disk/missing.m3u8', '/memfs/missing.m3u8', '/missing.m3u8', '/api/v3/process/nope', '/api/v3/nothing-here']) {
    const r = await rawRequest(app.url, 'HEAD', path, { headers: UI });
    t.equal(r.status, 404, `${path}: 404`);
    t.equal(r.headers['content-type'], undefined, `${path}: no content type, so the UI does not parse a body`);
    t.equal(r.text, '');
  }
  // a GET of the same keeps the Error body
  const g = await rawRequest(app.url, 'GET', '/api/v3/process/nope', { headers: UI });
  t.match(g.headers['content-type'], /^application\/json/);
  t.same(g.json, { code: 404, message: 'Unknown process ID', details: ['unknown process'] });
});

t.test('auth on: anonymous About is exactly {app, auths, version}; HEAD 401 is status only', async (t) => {
  const app = await startApp(t, { config: { api: { auth: { enable: true, username: 'admin', password: 'test', jwt: { secret: 'a-secret-for-tests' } } } } });
  const r = await rawRequest(app.url, 'GET', '/api', { headers: { accept: '*/*', 'content-type': 'application/json' } });
  t.equal(r.status, 200);
  t.same(Object.keys(r.json as object).sort(), ['app', 'auths', 'version']);
  t.same((r.json as any).version, { number: '16.0.0' });
  const h = await rawRequest(app.url, 'HEAD', '/api/v3/fs/mem/x.m3u8', { headers: UI });
  t.equal(h.status, 401);
  t.equal(h.headers['content-type'], undefined);
});

t.test('version.arch uses Go names', async (t) => {
  t.equal(goArch('linux', 'x64'), 'linux/amd64');
  t.equal(goArch('linux', 'arm64'), 'linux/arm64');
  t.equal(goArch('linux', 'ia32'), 'linux/386');
  t.equal(goArch('linux', 'arm'), 'linux/arm');
  const app = await startApp(t);
  const about = await app.request('GET', '/api');
  t.equal(about.body.version.arch, goArch());
  t.notMatch(about.body.version.arch, /x64|ia32/);
});

t.test('a DELETE with a body (JSON, SDP, text, none typed) answers as one without', async (t) => {
  const app = await startApp(t);
  const make = { id: 'del', autostart: false, input: [{ id: 'in', address: 'testsrc2', options: ['-f', 'lavfi'] }], output: [{ id: 'out', address: '-', options: ['-f', 'null'] }] };
  for (const [type, body] of [['application/json', '{}'], ['application/json', 'not json'], ['application/sdp', 'v=0'], ['text/plain', 'x'], [undefined, 'x']] as const) {
    t.equal((await app.request('POST', '/api/v3/process', { body: make })).status, 200);
    const r = await app.request('DELETE', '/api/v3/process/del', { raw: body, headers: type ? { 'content-type': type } : {} });
    t.equal(r.status, 200, `${type ?? 'no type'} ${JSON.stringify(body)}: ${r.text}`);
    t.equal((await app.request('DELETE', '/api/v3/process/del', { raw: body, headers: type ? { 'content-type': type } : {} })).status, 404, 'then gone');
  }
});
