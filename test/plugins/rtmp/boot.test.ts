import t from 'tap';
import { createServer, connect, type Server } from 'node:net';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startApp } from '../../helpers/app.ts';
import { startRtmpApp, publish, play } from './helpers.ts';
import { waitFor } from '../../helpers/wait.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';

const PROBE = fileURLToPath(new URL('./fixtures/slim-probe.ts', import.meta.url));

function busyPort(t: { teardown(fn: () => unknown): void }): Promise<number> {
  return new Promise((resolve) => {
    const s: Server = createServer().listen(0, '127.0.0.1', () => resolve((s.address() as { port: number }).port));
    t.teardown(() => new Promise((r) => s.close(r)));
  });
}

t.test('a busy port fails the boot with a message naming rtmp.address; the process lives on', async (t) => {
  const port = await busyPort(t);
  await t.rejects(startApp(t, { config: { rtmp: { enable: true, address: `127.0.0.1:${port}` } } }),
    { message: new RegExp(`rtmp\\.address '127\\.0\\.0\\.1:${port}': cannot listen, the port is already in use`) });
  // the package's own server would have called process.exit(1) here
  const app = await startApp(t, { config: { rtmp: { enable: true, address: '127.0.0.1:0' } } });
  t.ok((app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService).ports().rtmp > 0, 'a free port boots');
});

t.test('running RTMP installs no signal handlers and writes no ./data store', async (t) => {
  const hadData = existsSync(join(process.cwd(), 'data'));
  const before = process.listenerCount('SIGINT') + process.listenerCount('SIGTERM');
  const app = await startRtmpApp(t);
  publish(t, `${app.base}/live/s`, { seconds: 30 });
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body.length === 1, { what: 'listed' });
  t.equal(process.listenerCount('SIGINT') + process.listenerCount('SIGTERM'), before);
  t.equal(existsSync(join(process.cwd(), 'data')), hadData, 'no JSON store folder appeared');
});

async function probe(t: { teardown(fn: () => unknown): void; notOk(v: unknown, m: string): unknown }, rtmp: Record<string, unknown>, plugins?: string[]): Promise<{ nms: number; heavy: number; signalListenersAdded: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'rtmp-slim-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const cfg = join(dir, 'config.json');
  await writeFile(cfg, JSON.stringify({ address: '127.0.0.1:0', db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } }, log: { level: 'silent' }, rtmp, ...(plugins ? { plugins } : {}) }));
  const out = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, [PROBE, cfg], { cwd: dir, timeout: 60_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message} ${stderr}`)) : resolve(stdout)));
  });
  t.notOk(existsSync(join(dir, 'data')), 'no ./data in the working folder');
  return JSON.parse(out.trim().split('\n').pop()!);
}

t.test('slim: without rtmp node-media-server is never imported; with it, only its RTMP layer', async (t) => {
  t.match(await probe(t, { enable: false }), { nms: 0 }, 'rtmp off: nothing of node-media-server loaded');
  // without graphql, whose mercurius loads ws itself, so that any ws seen here came from rtmp
  const plugins = ['disk-fs', 'memfs', 'rtmp'];
  t.match(await probe(t, { enable: false }, plugins), { nms: 0, heavy: 0 }, 'the baseline loads none of them');
  const on = await probe(t, { enable: true, address: '127.0.0.1:0' }, plugins);
  t.ok(on.nms > 0, `rtmp on: ${on.nms} of its modules loaded (the probe sees them)`);
  t.equal(on.heavy, 0, 'no express, ws or jsonwebtoken (its HTTP side)');
  t.equal(on.signalListenersAdded, 0, 'no signal handlers from the package');
});

t.test('a config reload closes the old RTMP server and starts the new one', async (t) => {
  const app = await startRtmpApp(t);
  const oldPort = app.rtmp.ports().rtmp;
  const before = app.service.app;
  t.equal((await app.request('GET', '/api/v3/config/reload')).status, 200);
  await waitFor(() => app.service.app !== before && app.service.app.kernel.plugins.includes('rtmp'), { what: 'reload' });
  const svc = await waitFor(() => { try { return app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService; } catch { return undefined; } }, { what: 'new rtmp service' });
  const base = `rtmp://127.0.0.1:${svc.ports().rtmp}`;
  publish(t, `${base}/live/r`);
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body.length === 1, { what: 'listed after reload' });
  t.equal(await play(t, `${base}/live/r`, { frames: 5 }).done, 0);
  if (svc.ports().rtmp !== oldPort) {
    t.ok(await refused(oldPort), 'the old listener is closed');
  }
});

/** Whether a TCP connect to the port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((done) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => { s.destroy(); done(false); });
    s.once('error', () => done(true));
  });
}

t.test("the Python client's PUT of {rtmp:{enable:true}} is accepted now that the plugin exists", async (t) => {
  const app = await startApp(t);
  const r = await app.request('PUT', '/api/v3/config', { body: { rtmp: { enable: true } } });
  t.equal(r.status, 200, r.text);
  const bad = await app.request('PUT', '/api/v3/config', { body: { rtmp: { enable: true, app: 'live', enable_tls: true } } });
  t.equal(bad.status, 409);
  t.match(bad.body, { 'rtmp.app': [/absolute path/], 'rtmp.enable_tls': [/needs rtmp.enable and tls.enable/] }, 'the rules now live in the plugin');
});
