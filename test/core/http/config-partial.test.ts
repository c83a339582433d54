import t from 'tap';
import { readFile } from 'node:fs/promises';
import { startApp } from '../../helpers/app.ts';

// exactly what the Python client's test setup sends (issue 9)
const PYTHON_BODY = {
  version: 3, api: { auth: { enable: true, username: 'admin', password: 'test' } },
  srt: { enable: true }, rtmp: { enable: true }, sessions: { ip_ignorelist: [] },
};

const stored = async (path: string) => JSON.parse(await readFile(path, 'utf8'));

t.test("the Python client's partial body merges and is stored (rtmp and srt have their plugins)", async (t) => {
  const app = await startApp(t, { config: { name: 'kept' } });
  const r = await app.request('PUT', '/api/v3/config', { body: PYTHON_BODY });
  t.equal(r.status, 200, `stored (${r.text})`);
  const after = await stored(app.configPath);
  t.same([after.rtmp.enable, after.srt.enable, after.api.auth.enable], [true, true, true]);
  t.equal(after.name, 'kept', 'missing keys keep their values');
});

t.test('enabling a service whose plugin is not loaded is a ConfigError naming the plugin (design 4)', async (t) => {
  const app = await startApp(t, { config: { name: 'kept', plugins: ['auth', 'disk-fs', 'memfs'] } });
  const before = await readFile(app.configPath, 'utf8');
  const r = await app.request('PUT', '/api/v3/config', { body: PYTHON_BODY });
  t.equal(r.status, 409, 'values, not shape: no 400');
  t.same(Object.keys(r.body).sort(), ['rtmp.enable', 'srt.enable']);
  t.match(r.body['rtmp.enable'][0], /plugin 'rtmp' is not loaded/);
  t.equal(await readFile(app.configPath, 'utf8'), before, 'nothing stored');
  const { srt: _s, rtmp: _r, ...rest } = PYTHON_BODY;
  const ok = await app.request('PUT', '/api/v3/config', { body: rest, headers: { 'content-type': 'application/json' } });
  t.equal(ok.status, 200);
  const s = await stored(app.configPath);
  t.same([s.api.auth.enable, s.api.auth.username, s.api.auth.password], [true, 'admin', 'test']);
  t.same(s.sessions.ip_ignorelist, [], 'arrays sent replace arrays');
  t.equal(s.sessions.session_timeout_sec, 30, 'missing keys keep their values');
  t.equal(s.name, 'kept');
  t.equal((await app.request('GET', '/api/v3/config')).body.config.api.auth.username, 'admin');
});

t.test('partial version 1 and 2 bodies are lifted to layout 3', async (t) => {
  const app = await startApp(t);
  const email = (await stored(app.configPath)).tls.email;
  const v1 = await app.request('PUT', '/api/v3/config', {
    body: { version: 1, rtmp: { app: 'live' }, storage: { disk: { cache: { types: ['.ts'] } } }, tls: { email: 'x@example.com' } },
  });
  t.equal(v1.status, 200, JSON.stringify(v1.body));
  let s = await stored(app.configPath);
  t.equal(s.version, 3);
  t.equal(s.rtmp.app, '/live', 'v1 app gets its leading slash');
  t.same(s.storage.disk.cache.types, { allow: ['.ts'], block: ['.m3u8', '.mpd'] }, 'v2 list becomes types.allow; block kept');
  t.equal(s.tls.email, email, 'a key layout 3 added keeps its value');
  const v2 = await app.request('PUT', '/api/v3/config', { body: { version: 2, name: 'two', storage: { disk: { cache: { types: [] } } } } });
  t.equal(v2.status, 200);
  s = await stored(app.configPath);
  t.equal(s.name, 'two');
  t.same(s.storage.disk.cache.types.allow, []);
});

t.test('null for lists and maps is empty; for objects and scalars it keeps the value', async (t) => {
  const app = await startApp(t, { config: { name: 'kept', router: { routes: { '/a': '/b' } } } });
  const plugins = (await stored(app.configPath)).plugins;
  const r = await app.request('PUT', '/api/v3/config', {
    body: {
      version: 3, name: null, sessions: { ip_ignorelist: null }, router: { routes: null }, storage: null,
      api: { access: { http: { allow: null } }, auth: { idp: { tenants: null } } }, host: { name: null }, plugins: null,
    },
  });
  t.equal(r.status, 200, JSON.stringify(r.body));
  const s = await stored(app.configPath);
  t.same(s.sessions.ip_ignorelist, []);
  t.same(s.router.routes, {});
  t.same(s.api.access.http.allow, []);
  t.same(s.api.auth.idp.tenants, []);
  t.same(s.api.auth.auth0.tenants, [], 'the alias section follows');
  t.equal(s.name, 'kept');
  t.equal(s.storage.memory.auth.username, 'admin', 'an object sent as null is left alone');
  t.same(s.plugins, plugins, 'plugins: null does not unload everything');
});

t.test('malformed bodies are still refused with 400', async (t) => {
  const app = await startApp(t);
  const before = await readFile(app.configPath, 'utf8');
  const json = await app.request('PUT', '/api/v3/config', { raw: '{"version":3,', headers: { 'content-type': 'application/json' } });
  t.equal(json.status, 400);
  t.equal(json.body.message, 'Invalid JSON');
  for (const body of [{ version: 3, name: 5 }, { api: { auth: 'on' } }, { sessions: { ip_ignorelist: 'x' } }, [1, 2]]) {
    const r = await app.request('PUT', '/api/v3/config', { body });
    t.equal(r.status, 400, JSON.stringify(body));
    t.same(Object.keys(r.body).sort(), ['code', 'details', 'message']);
  }
  t.equal((await app.request('PUT', '/api/v3/config', { body: { version: '3' } })).status, 400, 'a version that is not 1, 2 or 3');
  t.equal(await readFile(app.configPath, 'utf8'), before);
});
