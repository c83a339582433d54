import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startApp, type TestApp, type TestLike } from '../../helpers/app.ts';
import { makeChain } from '../../helpers/certs.ts';
import { waitFor } from '../../helpers/wait.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';

/*
 * Issue 27.4: values that got 200 on PUT and then stopped the service at reload (and every later
 * start) are 400 naming the key, and nothing is stored.
 */

/** A port held by another OS process (a port of this process would count as the service's own). */
async function busyPort(t: TestLike): Promise<number> {
  const child = spawn(process.execPath, ['-e', "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => console.log(s.address().port))"], { stdio: ['ignore', 'pipe', 'ignore'] });
  t.teardown(() => { child.kill('SIGKILL'); });
  return new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    child.once('exit', () => reject(new Error('the port holder exited')));
  });
}

/** A loopback port free right now (bound, then released). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

async function refused(t: Test, app: TestApp, body: unknown, key: string, message: string): Promise<void> {
  const before = await readFile(app.configPath, 'utf8');
  const r = await app.request('PUT', '/api/v3/config', { body });
  t.equal(r.status, 400, `${key}: 400 (${r.text})`);
  t.equal(r.body.message, message, `${key}: ${message}`);
  t.ok(r.body.details?.some((d: string) => d.startsWith(`${key}: `)), `${key} is named in the details`);
  t.equal(await readFile(app.configPath, 'utf8'), before, `${key}: nothing stored`);
}

t.test('sizes and counts the service uses as bounds: 400 naming the key, nothing stored', async (t) => {
  const app = await startApp(t);
  const cases: [string, unknown][] = [
    ['api.max_body_size_mbytes', { api: { max_body_size_mbytes: 0 } }],
    ['api.max_body_size_mbytes', { api: { max_body_size_mbytes: -5 } }],
    ['api.max_body_size_mbytes', { api: { max_body_size_mbytes: 1e12 } }],
    ['storage.disk.cache.max_size_mbytes', { storage: { disk: { cache: { max_size_mbytes: -1 } } } }],
    ['storage.disk.cache.max_file_size_mbytes', { storage: { disk: { cache: { max_file_size_mbytes: -1 } } } }],
    ['encoder.log.max_lines', { encoder: { log: { max_lines: 1e9 } } }],
    ['metrics.range_sec', { metrics: { range_sec: 1e9 } }],
    ['metrics.interval_sec', { metrics: { interval_sec: 1e7 } }],
    ['sessions.persist_interval_sec', { sessions: { persist_interval_sec: 3e6 } }],
    ['events.heartbeat_ms', { events: { heartbeat_ms: 3e9 } }],
    ['events.overflow_grace_ms', { events: { overflow_grace_ms: 3e9 } }],
    ['events.webhook_timeout_seconds', { events: { webhook_timeout_seconds: 3e6 } }],
    ['debug.force_gc', { debug: { force_gc: -1 } }],
    ['debug.memory_limit_mbytes', { debug: { memory_limit_mbytes: -1 } }],
  ];
  for (const [key, body] of cases) await refused(t, app, body, key, 'Invalid JSON');
  t.equal((await app.request('PUT', '/api/v3/config', { body: { api: { max_body_size_mbytes: 8 } } })).status, 200, 'a good size is stored');
});

t.test('listen addresses: a port another program holds, listeners that collide; ports of this service are fine', async (t) => {
  const app = await startApp(t);
  const own = `127.0.0.1:${app.service.port}`;
  await refused(t, app, { address: `127.0.0.1:${await busyPort(t)}` }, 'address', 'Failed to activate config');
  await refused(t, app, { address: '192.0.2.1:0' }, 'address', 'Failed to activate config');
  await refused(t, app, { rtmp: { enable: true, address: own } }, 'rtmp.address', 'Failed to activate config');
  await refused(t, app, { rtmp: { enable: true, address: `:${app.service.port}` } }, 'rtmp.address', 'Failed to activate config');

  const port = await freePort();
  const dir = app.dir;
  const chain = makeChain(dir);
  await refused(t, app, {
    tls: { enable: true, address: `127.0.0.1:${port}`, cert_file: chain.certFile, key_file: chain.keyFile },
    rtmp: { enable: true, enable_tls: true, address: '127.0.0.1:0', address_tls: `127.0.0.1:${port}` },
  }, 'rtmp.address_tls', 'Failed to activate config');

  const same = await app.request('PUT', '/api/v3/config', { body: { address: own } });
  t.equal(same.status, 200, `the port this service holds is its own (${same.text})`);
  const srt = await app.request('PUT', '/api/v3/config', { body: { srt: { enable: true, address: own } } });
  t.equal(srt.status, 200, `SRT (UDP) may share a number with the HTTP (TCP) port (${srt.text})`);
});

t.test("a port this service's RTMP listener holds: stored, and the reload moves the API onto it", async (t) => {
  const app = await startApp(t, { config: { rtmp: { enable: true, address: '127.0.0.1:0' } } });
  const rtmpPort = (app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService).ports().rtmp;
  const put = await app.request('PUT', '/api/v3/config', { body: { address: `127.0.0.1:${rtmpPort}` } });
  t.equal(put.status, 200, `held by this very service (${put.text})`);
  const r = await app.request('GET', '/api/v3/config/reload');
  t.equal(r.status, 200);
  await waitFor(() => app.service.port === rtmpPort, { what: 'the API on the former RTMP port' });
  t.equal((await app.request('GET', '/api')).status, 200, 'the API answers there');
  t.not((app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService).ports().rtmp, rtmpPort, 'RTMP took another port');
});

t.test('with serving threads on the API port, that port is still the service\'s own', async (t) => {
  const app = await startApp(t, { config: { http: { threads: 2 } } });
  const same = await app.request('PUT', '/api/v3/config', { body: { address: `127.0.0.1:${app.service.port}` } });
  t.equal(same.status, 200, same.text);
});

t.test('TLS files that are not PEM or do not belong together: 400 naming the file key', async (t) => {
  const app = await startApp(t);
  const a = makeChain(app.dir, 'a');
  const b = makeChain(app.dir, 'b');
  const notPem = join(app.dir, 'not-pem.crt');
  await writeFile(notPem, 'this is not a certificate\n');
  const tls = (cert_file: string, key_file: string) => ({ tls: { enable: true, address: '127.0.0.1:0', cert_file, key_file } });
  await refused(t, app, tls(notPem, a.keyFile), 'tls.cert_file', 'Failed to activate config');
  await refused(t, app, tls(a.certFile, notPem), 'tls.key_file', 'Failed to activate config');
  await refused(t, app, tls(a.certFile, b.keyFile), 'tls.key_file', 'Failed to activate config');
  const ok = await app.request('PUT', '/api/v3/config', { body: tls(a.certFile, a.keyFile) });
  t.equal(ok.status, 200, `a matching pair is stored (${ok.text})`);
});

t.test('folders the service cannot create, a disk folder that would serve the config file (the operator\'s file, at a reload)', async (t) => {
  const app = await startApp(t);
  const file = join(app.dir, 'a-file');
  await writeFile(file, 'x');
  const booted = await readFile(app.configPath, 'utf8');
  // both keys are the operator's (issue 26): the API cannot change them, a file edit can
  for (const [key, edit] of [['db.dir', { db: { dir: join(file, 'db') } }], ['storage.disk.dir', { storage: { disk: { dir: app.dir } } }]] as const) {
    t.equal((await app.request('PUT', '/api/v3/config', { body: edit })).status, 400, `${key}: not through the API`);
    await writeFile(app.configPath, JSON.stringify({ ...JSON.parse(booted), ...edit }));
    const r = await app.request('GET', '/api/v3/config/reload');
    t.equal(r.status, 400, `${key}: the reload is refused`);
    t.equal(r.body.message, 'Failed to activate config');
    t.ok(r.body.details?.some((d: string) => d.startsWith(`${key}: `)), `${key} is named in the details`);
    t.equal(await readFile(app.configPath, 'utf8'), booted, `${key}: the file boots again`);
  }
});

t.test('values the reference refuses stay a 409 ConfigError map', async (t) => {
  const app = await startApp(t);
  const r = await app.request('PUT', '/api/v3/config', { body: { rtmp: { enable: true, enable_tls: true, address: ':1935', address_tls: ':1935' }, tls: { enable: true, auto: true } } });
  t.equal(r.status, 409);
  t.ok(r.body['rtmp.address_tls'], JSON.stringify(r.body));
});
