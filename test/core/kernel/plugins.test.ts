import t from 'tap';
import { readFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startApp } from '../../helpers/app.ts';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}.ts`, import.meta.url));

t.test('a vendor plugin uses every SDK capability', async (t) => {
  const app = await startApp(t, {
    config: { plugins: [fixture('consumer-plugin'), { module: fixture('full-plugin'), config: { greeting: 'hi' } }] },
  });
  const r = await app.request('GET', '/api/v3/fixture');
  t.equal(r.status, 200);
  t.equal(r.body.text, 'hi WORLD', 'own config with defaults, waterfall hook tapped by name');
  t.same(r.body.greeted, ['hi WORLD'], 'sync hook');
  t.equal(r.body.listened, app.service.port, 'onListen saw the real port through serverRef');
  t.equal(r.body.readied, 0, 'onReady: no port yet where the address says :0');
  t.ok(r.body.filesystems.includes('fixture'), 'multi-provider ref');
  t.equal(r.body.placeholder, 'fixture://{name}', 'placeholder registry');
  t.equal(r.body.nobody, true, 'optional dep without provider is undefined');
  t.equal(r.body.component, 'full-fixture', 'child logger named after the plugin');
  t.equal(r.body.mounts, 1);
  t.same((await app.request('GET', '/api/v3/consumer')).body, { text: 'hi consumer' }, 'consumer mounted after provider');
  t.same((await app.request('GET', '/fixture/public')).body, { public: true });

  const fail = await app.request('GET', '/api/v3/fixture/fail');
  t.equal(fail.status, 418);
  t.same(fail.body, { code: 418, message: 'Teapot', details: ['short and stout'] });
  const crash = await app.request('GET', '/api/v3/fixture/crash');
  t.equal(crash.status, 500);
  t.same(Object.keys(crash.body).sort(), ['code', 'details', 'message']);
  const typed = await app.request('POST', '/api/v3/fixture/typed', { body: { n: 'x', s: 1, extra: true } });
  t.equal(typed.status, 400, 'wrong types: 400 with the Error body');
  t.equal(typed.body.code, 400);
  t.ok(typed.body.details.length >= 1);
  t.same((await app.request('POST', '/api/v3/fixture/typed', { body: { n: 2, s: 'abc', unknown: 1 } })).body, { sum: 5 }, 'unknown fields ignored');

  // retain survives a reload; onClose runs
  const reload = await app.request('GET', '/api/v3/config/reload');
  t.equal(reload.status, 200);
  const again = await waitForMounts(app, 2);
  t.equal(again, 2, 'retained state survives a reload');
  t.equal(await readFile(join(app.dir, 'db', 'plugins', 'full-fixture', 'closed'), 'utf8'), '1', 'onClose ran with the first app');
});

t.test('the configured port is known before the listen (a {memfs} resolved at restore stays right)', async (t) => {
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => { const { port } = s.address() as AddressInfo; s.close(() => resolve(port)); });
  });
  const app = await startApp(t, { config: { address: `127.0.0.1:${port}`, plugins: ['*', { module: fixture('full-plugin'), config: { greeting: 'hi' } }] } });
  const r = await app.request('GET', '/api/v3/fixture');
  t.same([r.body.readied, r.body.listened], [port, port]);
});

async function waitForMounts(app: Awaited<ReturnType<typeof startApp>>, n: number): Promise<number> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const r = await app.request('GET', '/api/v3/fixture').catch(() => undefined);
    if (r?.status === 200 && r.body.mounts === n) return n;
    if (Date.now() > deadline) throw new Error('reload did not happen');
    await new Promise((res) => setTimeout(res, 100));
  }
}

t.test('boot failures name the cause', async (t) => {
  const fails = async (config: Record<string, unknown>) => {
    try {
      await startApp(t, { config });
    } catch (err) {
      return (err as Error).message;
    }
    return 'started';
  };
  t.match(await fails({ plugins: ['no-such-plugin'] }), /Unknown plugin 'no-such-plugin' in 'plugins\[0\]'; known plugins: /);
  t.match(await fails({ plugins: [fixture('needs-missing-plugin')] }), /Plugin 'needs-missing' needs service 'test.nobody-provides-this'/);
  t.match(await fails({ plugins: [fixture('failing-plugin')] }), /Plugin 'failing' startup failed: cannot bind port 1/);
  t.match(await fails({ plugins: [{ module: fixture('full-plugin'), config: { greeting: 5, times: 0 } }] }),
    /plugins\[0\]\.config\.greeting[^]*plugins\[0\]\.config\.times/, 'every vendor config error at once');
  t.match(await fails({ plugins: [fixture('consumer-plugin')] }), /needs service 'test.greeter'/);
});
