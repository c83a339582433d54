import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startApp } from '../../helpers/app.ts';

/** A small single-page app build: index.html, a hashed asset, a nested folder. */
function uiFolder(dir: string): string {
  const ui = join(dir, 'ui');
  mkdirSync(join(ui, 'static', 'js'), { recursive: true });
  mkdirSync(join(ui, 'docs'));
  writeFileSync(join(ui, 'index.html'), '<!doctype html><div id="root"></div>');
  writeFileSync(join(ui, 'static', 'js', 'main.1234.js'), 'console.log("ui")');
  writeFileSync(join(ui, 'docs', 'index.html'), '<p>docs</p>');
  writeFileSync(join(dir, 'secret.txt'), 'outside');
  symlinkSync(join(dir, 'secret.txt'), join(ui, 'escape.txt'));
  return ui;
}

t.test('router.ui_path served at /ui/ with SPA fallback and caching headers', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'core-ui-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const ui = uiFolder(dir);
  const extra = join(dir, 'extra');
  mkdirSync(extra);
  writeFileSync(join(extra, 'a.txt'), 'A');
  const app = await startApp(t, {
    config: {
      api: { auth: { enable: true, username: 'admin', password: 'pw' } },
      router: { ui_path: ui, routes: { '/old': '/ui/docs/../', '/files/*': extra, '/relative': 'nowhere' } },
    },
  });

  const noFollow = (path: string) => fetch(app.url + path, { redirect: 'manual' });
  const bare = await noFollow('/ui');
  t.equal(bare.status, 301);
  t.equal(bare.headers.get('location'), '/ui/');

  const index = await app.request('GET', '/ui/');
  t.equal(index.status, 200, 'public: no token needed');
  t.match(index.text, /id="root"/);
  t.match(index.headers.get('content-type'), /^text\/html/);
  t.equal(index.headers.get('cache-control'), 'no-cache');

  const js = await app.request('GET', '/ui/static/js/main.1234.js');
  t.equal(js.status, 200);
  t.match(js.headers.get('content-type'), /javascript/);
  t.equal(js.headers.get('cache-control'), 'public, max-age=3600');
  const etag = js.headers.get('etag')!;
  t.ok(etag);
  const again = await app.request('GET', '/ui/static/js/main.1234.js', { headers: { 'if-none-match': etag } });
  t.equal(again.status, 304, 'revalidation');

  t.match((await app.request('GET', '/ui/docs/')).text, /docs/, 'a folder answers its index.html');
  const route = await app.request('GET', '/ui/processes/abc');
  t.equal(route.status, 200, 'a client-side route gets index.html');
  t.match(route.text, /id="root"/);
  const missing = await app.request('GET', '/ui/static/missing.js');
  t.equal(missing.status, 404, 'a missing asset stays 404');
  t.same(missing.body, { code: 404, message: 'Not Found', details: ['Not Found'] });
  t.equal((await app.request('GET', '/ui/escape.txt')).status, 404, 'a symlink out of the folder is not followed');
  t.equal((await app.request('GET', '/ui/..%2f..%2fsecret.txt')).status, 404);
  t.equal((await app.request('HEAD', '/ui/')).status, 200);

  const old = await noFollow('/old?x=1');
  t.equal(old.status, 301, 'file route');
  t.equal(old.headers.get('location'), '/ui/');
  t.equal((await app.request('GET', '/relative')).status, 404, 'a target not starting with / is ignored');
  t.equal((await noFollow('/files')).headers.get('location'), '/files/');
  t.equal((await app.request('GET', '/files/a.txt')).text, 'A', 'directory route');
  t.equal((await app.request('GET', '/files/')).status, 404, 'no SPA fallback on directory routes');
  t.equal((await app.request('GET', '/api/v3/config')).status, 401, 'the API still needs a token');
});

t.test('router.routes under a blocked prefix is refused at start', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'core-ui-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await t.rejects(startApp(t, { config: { router: { routes: { '/api/x': '/y' } } } }), /router\.routes.*blocked prefix \/api/s);
  await t.rejects(startApp(t, { config: { router: { ui_path: dir, routes: { '/ui/x': '/y' } } } }), /blocked prefix \/ui/);
  await t.rejects(startApp(t, { config: { router: { routes: { '/d/*': join(dir, 'nope') } } } }), /is not a directory/);
});
