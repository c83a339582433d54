import '../../../app/install.ts'; // this service's built-ins, installed into the core
import t, { type Test } from 'tap';
import { readFile } from 'node:fs/promises';
import { cleanEnv, startApp, type TestApp } from '../../helpers/app.ts';
import { semanticErrors } from '../../../core/config/validate.ts';
import { withDefaults } from '../../../core/config/load.ts';

/*
 * Issue 44.4: config values are checked for what they mean. A value of the wrong form (an address
 * where an IP is meant, a URL without its scheme, a timer no timer can run, a path with a line
 * break) was stored and then left its feature broken: `webrtc.bind_address: "127.0.0.1:5000"` made
 * every WHEP offer answer 400 "Failed to gather local ICE candidates". Now: 400 naming the key and
 * the form, nothing stored, the running service unchanged; the same at start (the boot stops).
 */

/** [key as named in the answer, body, a fragment of the expected form] */
const BAD: [string, Record<string, unknown>, RegExp][] = [
  ['address', { address: 'x' }, /host:port address/],
  ['address', { address: '127.0.0.1:99999' }, /port: 0 to 65535/],
  ['address', { address: 'http://127.0.0.1:8080' }, /host:port/],
  ['address', { address: '127.0.0.1' }, /host:port/],
  ['tls.address', { tls: { address: 'every interface:8181' } }, /host:port/],
  ['rtmp.address', { rtmp: { address: '127.0.0.1:' } }, /host:port/],
  ['rtmp.address_tls', { rtmp: { address_tls: 'rtmps://:1936' } }, /host:port/],
  ['srt.address', { srt: { address: 'srt://:6000' } }, /host:port/],
  ['webrtc.bind_address', { webrtc: { enable: true, bind_address: '127.0.0.1:5000' } }, /IP address of this machine without a port/],
  ['webrtc.bind_address', { webrtc: { bind_address: 'eth0' } }, /IP address/],
  ['webrtc.public_addresses.0', { webrtc: { public_addresses: ['203.0.113.5:3478'] } }, /IPv4 or IPv6 address without a port/],
  ['webrtc.public_addresses.0', { webrtc: { public_addresses: ['1.2'] } }, /IPv4 or IPv6/],
  ['webrtc.ice_servers.0', { webrtc: { ice_servers: ['stun.example.com:3478'] } }, /STUN or TURN URL/],
  ['webrtc.ice_servers.0', { webrtc: { ice_servers: ['stun:user:pw@stun.example.com'] } }, /STUN or TURN URL/],
  ['host.name.0', { host: { name: ['https://example.com'] } }, /host name or IP address/],
  ['host.name.0', { host: { name: ['my host'] } }, /host name/],
  ['storage.s3.0.endpoint', { storage: { s3: [s3('x', 'http://127.0.0.1:9000')] } }, /without scheme/],
  ['tls.acme_directory', { tls: { acme_directory: 'acme.example.com/directory' } }, /http:\/\/ or https:\/\/ URL/],
  ['tls.email', { tls: { email: 'nobody' } }, /e-mail address/],
  // a RegExp backtracked 22 s on a value like this one (128 K)
  ['tls.email', { tls: { email: `a@${'.'.repeat(128_000)}@` } }, /e-mail address/],
  ['tls.email', { tls: { email: `${'a'.repeat(250)}@b.cd` } }, /e-mail address/],
  ['service.url', { service: { url: 'service.datarhei.com' } }, /URL, or empty/],
  ['tls.cert_file', { tls: { cert_file: 'cert\n.pem' } }, /file system path/],
  ['storage.mimetypes_file', { storage: { mimetypes_file: 'mime\u0000types' } }, /file system path/],
  ['router.ui_path', { router: { ui_path: 'ui\r' } }, /file system path/],
  ['http.header_timeout_seconds', { http: { header_timeout_seconds: 3_000_000 } }, /2147483/],
  ['http.body_timeout_seconds', { http: { body_timeout_seconds: 3_000_000 } }, /2147483/],
  ['sessions.session_timeout_sec', { sessions: { session_timeout_sec: 3_000_000 } }, /2147483/],
  ['debug.force_gc', { debug: { force_gc: 3_000_000 } }, /2147483/],
  ['events.webhook_retry_seconds', { events: { webhook_retry_seconds: 3_000_000 } }, /2147483/],
  ['storage.disk.cache.ttl_seconds', { storage: { disk: { cache: { ttl_seconds: 3_000_000 } } } }, /2147483/],
];

/** A whole `storage.s3` entry (a PUT sends each entry whole). */
function s3(name: string, endpoint: string): Record<string, unknown> {
  return { name, mountpoint: `/${name}`, auth: { enable: false, username: '', password: '' }, endpoint, access_key_id: 'a', secret_access_key: 's', bucket: 'b', region: '', use_ssl: false };
}

/** The documented forms, each stored (none of them moves a listener of the running service). */
const GOOD: Record<string, unknown>[] = [
  { address: '127.0.0.1:0' }, { address: ':0' }, { address: '0' }, { address: 'localhost:0' },
  { tls: { address: ':8181' } }, { tls: { address: '[::1]:8181' } }, { tls: { address: '::1:8181' } },
  { rtmp: { address: ':1935', address_tls: '0.0.0.0:1936' } }, { srt: { address: '6000' } }, { srt: { address: 'media.example.com:6000' } },
  { webrtc: { bind_address: '' } }, { webrtc: { bind_address: '::1' } }, { webrtc: { enable: true, bind_address: '127.0.0.1' } },
  { webrtc: { public_addresses: ['203.0.113.5', '2001:db8::1'], ice_servers: ['stun:stun.l.google.com:19302', 'turn:user:secret@turn.example.com:3478?transport=tcp', 'turns:turn.example.com'] } },
  { host: { name: ['example.com', '203.0.113.5', 'example.com:8080'] } },
  { storage: { s3: [s3('x', '127.0.0.1:9000'), s3('y', 's3.eu-central-1.amazonaws.com'), s3('z', '')] } },
  { tls: { email: '', acme_directory: 'https://127.0.0.1:14000/dir' } }, { tls: { email: 'cert@example.com' } },
  { service: { url: '' } }, { service: { url: 'https://service.datarhei.com' } },
  { http: { header_timeout_seconds: 2_147_483 } }, { debug: { force_gc: 60 } },
];

async function stateOf(app: TestApp): Promise<[string, unknown]> {
  return [await readFile(app.configPath, 'utf8'), (await app.request('GET', '/api/v3/config')).body.config];
}

async function refused(t: Test, app: TestApp, key: string, body: Record<string, unknown>, form: RegExp): Promise<void> {
  const before = await stateOf(app);
  const r = await app.request('PUT', '/api/v3/config', { body });
  const line = (r.body.details as string[] | undefined)?.find((d) => d.startsWith(`${key}: `));
  t.equal(r.status, 400, `${JSON.stringify(body)}: 400 (${r.text.slice(0, 300)})`);
  t.ok(line, `${key} is named`);
  t.match(line ?? '', form, `with the form it expects (${line})`);
  t.same(await stateOf(app), before, `${key}: nothing stored, the running config unchanged`);
}

t.test('values of the wrong form: 400 naming the key and the expected form; nothing stored', async (t) => {
  const app = await startApp(t);
  for (const [key, body, form] of BAD) await refused(t, app, key, body, form);
  t.equal((await app.request('GET', '/api')).status, 200, 'the service runs on');
});

t.test('the documented forms are stored', async (t) => {
  const app = await startApp(t);
  for (const body of GOOD) {
    const r = await app.request('PUT', '/api/v3/config', { body });
    t.equal(r.status, 200, `${JSON.stringify(body)}: stored (${r.text.slice(0, 300)})`);
  }
});

t.test('webrtc.bind_address that is no address of this machine: 400 at PUT, as every offer would fail', async (t) => {
  const app = await startApp(t);
  const before = await readFile(app.configPath, 'utf8');
  const r = await app.request('PUT', '/api/v3/config', { body: { webrtc: { enable: true, bind_address: '192.0.2.1' } } });
  t.equal(r.status, 400);
  t.equal(r.body.message, 'Failed to activate config');
  t.match(r.body.details, [/^webrtc\.bind_address: WebRTC UDP 192\.0\.2\.1:0: 192\.0\.2\.1 is not an address of this machine/]);
  t.equal(await readFile(app.configPath, 'utf8'), before, 'nothing stored');
});

t.test('at start: a value of the wrong form in the file or the environment stops the boot naming the key and the form', async (t) => {
  await t.rejects(startApp(t, { config: { webrtc: { enable: true, bind_address: '127.0.0.1:5000' } } }),
    /webrtc\.bind_address: '127\.0\.0\.1:5000' is not an IP address of this machine without a port/);
  await t.rejects(startApp(t, { env: cleanEnv({ CORE_SRT_ADDRESS: 'srt://:6000' }) }), /srt\.address: 'srt:\/\/:6000' is not a host:port address/);
  await t.rejects(startApp(t, { config: { encoder: { confinement: { writable: ['/tmp/a\nb'] } } } }), /encoder\.confinement\.writable\.0: [\s\S]* is not a file system path/);
  // with the value rules' errors in the same message
  await t.rejects(startApp(t, { config: { address: 'x', log: { level: 'loud' } } }), /address: 'x' is not a host:port address[\s\S]*log\.level: 'loud' is not one of/);
});

t.test("a plugin entry's settings (the cluster's NATS servers and API address) are checked by the same forms", async (t) => {
  const cfg = withDefaults({ plugins: ['*', { name: 'cluster', config: { servers: ['http://nats.example.com'], api_address: 'node1:8080' } }] });
  const errs = await semanticErrors(cfg);
  t.match(errs['plugins[1].config.servers.0'], [/is not a NATS server URL/]);
  t.match(errs['plugins[1].config.api_address'], [/is not an http:\/\/ or https:\/\/ URL/]);
  const ok = withDefaults({ plugins: ['*', { name: 'cluster', config: { servers: ['nats://127.0.0.1:4222', '127.0.0.1:4223'], api_address: 'http://node1:8080' } }] });
  t.same(Object.keys(await semanticErrors(ok)).filter((k) => k.startsWith('plugins')), [], 'the documented forms pass');
});
