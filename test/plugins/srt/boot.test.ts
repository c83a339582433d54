import t from 'tap';
import { createSocket } from 'node:dgram';
import { startApp, type TestLike } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { srtCaller, startSrtApp, TOKEN } from './srt-helpers.ts';

/** Points the plugin's loader elsewhere for one test (the plugin reads it when SRT is enabled). */
function hostAt(t: TestLike, path: string): void {
  const before = process.env.CORE_SRT_HOST;
  process.env.CORE_SRT_HOST = path;
  t.teardown(() => { if (before === undefined) delete process.env.CORE_SRT_HOST; else process.env.CORE_SRT_HOST = before; });
}

t.test('without srt.enable the SRT host never starts and /api/v3/srt does not exist', async (t) => {
  hostAt(t, '/nonexistent/srt-host');
  const app = await startApp(t);
  t.equal((await app.request('GET', '/api/v3/srt')).status, 404);
  t.ok(app.service.app.kernel.plugins.includes('srt'), 'the plugin is mounted, idle');
});

t.test('srt.enable without a built SRT host fails the boot saying how to fix it', async (t) => {
  hostAt(t, '/nonexistent/srt-host');
  await t.rejects(startApp(t, { config: { srt: { enable: true, address: '127.0.0.1:0' } } }),
    { name: 'BootError', message: /SRT host cannot start from \/nonexistent\/srt-host: .*apt-get install libsrt-openssl-dev/ });
});

t.test('a busy UDP port fails the boot', async (t) => {
  const udp = createSocket('udp4');
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
  t.teardown(() => udp.close());
  const { port } = udp.address();
  await t.rejects(startApp(t, { config: { srt: { enable: true, address: `127.0.0.1:${port}` } } }),
    { name: 'BootError', message: new RegExp(`SRT cannot listen on '127\\.0\\.0\\.1:${port}'`) });
});

t.test('config rules live in the plugin: address and passphrase length', async (t) => {
  const app = await startApp(t);
  const cfg = (await app.request('GET', '/api/v3/config')).body.config;
  // the address's form is its schema's (400, issue 44.4), the passphrase's length the plugin's rule (409)
  const r = await app.request('PUT', '/api/v3/config', { body: { ...cfg, srt: { ...cfg.srt, enable: true, address: 'nope', passphrase: 'short' } } });
  t.equal(r.status, 400);
  t.match(r.body.details, [/^srt\.address: 'nope' is not a host:port address/]);
  const p = await app.request('PUT', '/api/v3/config', { body: { ...cfg, srt: { ...cfg.srt, enable: true, address: '127.0.0.1:0', passphrase: 'short' } } });
  t.equal(p.status, 409);
  t.match(JSON.stringify(p.body), /srt\.passphrase.*10 to 79/);
});

t.test('a reload closes the listener and opens it again; publishers are ended', async (t) => {
  const app = await startSrtApp(t, { address: '127.0.0.1:0' });
  const pub = srtCaller(app.srtPort, `r,mode:publish,token:${TOKEN}`);
  t.teardown(() => pub.stop());
  await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body.publisher.r !== undefined, { what: 'published' });
  const before = app.service.app;
  t.equal((await app.request('GET', '/api/v3/config/reload')).status, 200);
  await waitFor(() => app.service.app !== before && app.service.app.kernel.plugins.includes('srt'), { what: 'reload' });
  t.equal(await pub.closed, 'broken', 'the old connection ended');
  const listed = await waitFor(async () => { const r = await app.request('GET', '/api/v3/srt'); return r.status === 200 && r.body; }, { what: 'listing after reload' });
  t.same(listed.publisher, {}, 'nothing publishes after the reload');
});
