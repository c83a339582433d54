import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import t from 'tap';
import { makeChain } from '../../helpers/certs.ts';
import { startCli } from '../../helpers/cli.ts';
import { waitFor } from '../../helpers/wait.ts';

// scripts/ensure-test-deps.sh installs Debian's pebble when run as root
const noPebble = spawnSync('pebble', ['-version']).error ? 'pebble (ACME test server) is not installed: run scripts/ensure-test-deps.sh as root' : false;

/** A free TCP port on loopback (pebble's ports and the HTTP-01 port must be known up front). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

interface Got { status: number; body: string; serial: string; issuer: string; validFrom: string; validTo: string }
function httpsGet(url: string, ca: Buffer | string, servername = 'localhost'): Promise<Got> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, servername, agent: false }, (res) => {
      const peer = (res.socket as TLSSocket).getPeerCertificate();
      let body = '';
      res.on('data', (d: Buffer) => { body += d.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, serial: peer.serialNumber, issuer: String(peer.issuer?.CN ?? ''), validFrom: peer.valid_from, validTo: peer.valid_to }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('tls.auto: pebble issues a certificate over HTTP-01, the service serves it and renews it', { skip: noPebble }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'core-acme-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // pebble's own API is HTTPS: a test CA the service trusts through NODE_EXTRA_CA_CERTS
  const api = makeChain(dir, 'pebble-api');
  const [acmePort, mgmtPort, httpPort, httpsPort, tlsAlpnPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  const pebbleConfig = join(dir, 'pebble.json');
  writeFileSync(pebbleConfig, JSON.stringify({
    pebble: {
      listenAddress: `127.0.0.1:${acmePort}`, managementListenAddress: `127.0.0.1:${mgmtPort}`,
      certificate: api.certFile, privateKey: api.keyFile, httpPort, tlsPort: tlsAlpnPort,
      ocspResponderURL: '', externalAccountBindingRequired: false,
      // short-lived certificates, so the renewal (a third of the lifetime ahead) happens in the test
      certificateValidityPeriod: 45,
    },
  }));
  const pebble = spawn('pebble', ['-config', pebbleConfig], {
    env: { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let pebbleLog = '';
  pebble.stdout.on('data', (d: Buffer) => { pebbleLog = (pebbleLog + d.toString()).slice(-10_000); });
  pebble.stderr.on('data', (d: Buffer) => { pebbleLog = (pebbleLog + d.toString()).slice(-10_000); });
  const pebbleGone = new Promise((r) => pebble.once('exit', r));
  t.teardown(async () => { if (pebble.exitCode === null) { pebble.kill('SIGKILL'); await pebbleGone; } });
  await waitFor(() => httpsGet(`https://127.0.0.1:${acmePort}/dir`, api.ca).then((r) => r.status === 200), { timeout: 30_000, what: `pebble up: ${pebbleLog}` });

  const app = await startCli(t, {
    address: `127.0.0.1:${httpPort}`,
    host: { name: ['localhost'] },
    tls: { enable: true, auto: true, email: '', address: `127.0.0.1:${httpsPort}`, acme_directory: `https://127.0.0.1:${acmePort}/dir` },
  }, { env: { NODE_EXTRA_CA_CERTS: api.caFiles.cert } });

  // pebble's issuing root is made at its start; the served chain must lead to it
  const root = await waitFor(() => httpsGet(`https://127.0.0.1:${mgmtPort}/roots/0`, api.ca).then((r) => (r.status === 200 ? r.body : undefined)), { what: 'pebble root' });
  const first = await waitFor(() => httpsGet(`https://127.0.0.1:${httpsPort}/ping`, root).catch(() => undefined), { timeout: 60_000, what: `a certificate from pebble served on HTTPS: ${pebbleLog}` });
  t.equal(first.status, 200);
  t.comment(`first certificate valid ${first.validFrom} .. ${first.validTo}`);
  t.equal(first.body, 'pong');
  t.match(first.issuer, /Pebble Intermediate/i, 'issued by pebble');
  t.ok(existsSync(join(app.dir, 'db', 'cert', 'localhost.json')), 'stored under <db.dir>/cert');
  t.ok(existsSync(join(app.dir, 'db', 'cert', 'account.key')));

  // on failure, the service's own log tells why
  t.teardown(async () => { if (t.passing()) return; t.comment((await (await fetch(`${app.url}/api/v3/log`)).json() as string[]).filter((l) => /ACME|HTTPS/.test(l)).join('\n')); });
  const renewed = await waitFor(() => httpsGet(`https://127.0.0.1:${httpsPort}/ping`, root).then((r) => (r.serial !== first.serial ? r : undefined)).catch(() => undefined),
    { timeout: 90_000, interval: 1000, what: 'a renewed certificate on the same listener' });
  t.equal(renewed.status, 200);
});
