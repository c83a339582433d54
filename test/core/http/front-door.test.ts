import t from 'tap';
import { startApp } from '../../helpers/app.ts';

t.test('front door without plugins', async (t) => {
  const app = await startApp(t, { config: { plugins: [], name: 'front-door' } });

  const ping = await app.request('GET', '/ping');
  t.equal(ping.status, 200);
  t.equal(ping.text, 'pong');
  t.match(ping.headers.get('content-type'), /^text\/plain/);

  const about = await app.request('GET', '/api');
  t.equal(about.status, 200);
  t.equal(about.body.app, 'datarhei-core');
  t.equal(about.body.name, 'front-door');
  t.ok(about.body.id.length > 0);
  t.same(about.body.auths, []);
  t.match(about.body.version.number, /^16\.(1[1-9]|[2-9]\d)\.\d+$/);
  t.match(about.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  t.type(about.body.uptime_seconds, 'number');
  t.match(about.body.version.compiler, /^node v\d+/);

  const missing = await app.request('GET', '/api/v3/does-not-exist');
  t.equal(missing.status, 404);
  t.same(missing.body, { code: 404, message: 'Not Found', details: ['Not Found'] });
  t.equal((await app.request('DELETE', '/ping')).status, 404, 'wrong method is a 404 Error too');

  const ui = await app.request('GET', '/api/swagger');
  t.ok([200, 302].includes(ui.status));
  const uiPage = await app.request('GET', '/api/swagger/static/index.html');
  t.equal(uiPage.status, 200);
  t.match(uiPage.text, /swagger/i);
  const doc = await app.request('GET', '/api/swagger/json');
  t.equal(doc.status, 200);
  t.equal(doc.body.openapi, '3.0.3');
  t.ok(doc.body.paths['/api/v3/config'], 'generated from the route schemas');
  t.ok(doc.body.paths['/api/v3/metadata/{key}']);
  t.ok(doc.body.paths['/api/v3/config'].put);
  t.equal((await app.request('GET', '/api/swagger/doc.json')).status, 200);

  t.equal((await app.request('GET', '/profiling')).status, 404, 'profiling off by default');
});

t.test('log ring: console strings and raw objects, bounded by log.max_lines', async (t) => {
  const app = await startApp(t, { config: { plugins: [], log: { max_lines: 5 } } });
  for (let i = 0; i < 10; i++) await app.request('PUT', `/api/v3/metadata/k${i}`, { body: i });
  app.service.app.kernel.log.info({ n: 42 }, 'hello ring');
  const con = await app.request('GET', '/api/v3/log');
  t.equal(con.status, 200);
  t.ok(con.body.length <= 5);
  t.match(con.body[con.body.length - 1], /^ts=\S+Z level=INFO component="Core" msg="hello ring" n=42$/);
  const raw = await app.request('GET', '/api/v3/log?format=raw');
  const last = raw.body[raw.body.length - 1];
  t.equal(last.message, 'hello ring');
  t.equal(last.n, 42);
  t.equal(last.component, 'Core');
  t.notOk('level' in last);
});

t.test('profiling page when debug.profiling is on', async (t) => {
  const app = await startApp(t, { config: { plugins: [], debug: { profiling: true } } });
  const page = await app.request('GET', '/profiling');
  t.equal(page.status, 200);
  t.match(page.text, /CPU profile/);
  const cpu = await app.request('GET', '/profiling/cpu?seconds=1');
  t.equal(cpu.status, 200);
  t.ok(Array.isArray(cpu.body.nodes), 'a V8 CPU profile');
  t.equal((await app.request('GET', '/profiling/cpu?seconds=abc')).status, 400);
});

t.test('the Swagger UI at the reference\'s address /api/swagger/index.html: 200 with the page, public like the others (issues 27.6, 44.5)', async (t) => {
  const app = await startApp(t, { config: { plugins: ['auth'], api: { auth: { enable: true, username: 'admin', password: 'pw-Secret-123' } } } });
  t.equal((await app.request('GET', '/api/v3/config')).status, 401, 'the API wants a token');
  const address = `${app.url}/api/swagger/index.html`;
  const page = await fetch(address, { redirect: 'manual' });
  t.equal(page.status, 200, 'the page itself at once (no redirect), without a token');
  t.match(page.headers.get('content-type'), /^text\/html/);
  const html = await page.text();
  t.match(html, /<div id="swagger-ui">/, 'the Swagger UI page');
  // what a browser loads from that address: the page's files, relative to it
  const files = [...html.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => new URL(m[1]!, address).href);
  t.ok(files.length >= 4, 'the page names its files');
  for (const f of files) t.equal((await fetch(f, { redirect: 'manual' })).status, 200, `${new URL(f).pathname} loads`);
  // the UI's script asks for the document at the page's address + '/json' (its resolveUrl)
  const init = await (await fetch(new URL('./static/swagger-initializer.js', address))).text();
  t.match(init, /resolveUrl\('\.\/json'\)/, 'the UI names its document relative to the page');
  const doc = await fetch(`${address}/json`);
  t.equal(doc.status, 200, 'the document the page asks for');
  t.ok((await doc.json() as { openapi?: string }).openapi, 'is the OpenAPI document');
  for (const p of ['/api/swagger', '/api/swagger/', '/api/swagger/doc.json']) {
    t.equal((await fetch(`${app.url}${p}`, { redirect: 'manual' })).status, 200, `${p} answers as before`);
  }
});
