import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { makeChain, tlsFiles } from '../../helpers/certs.ts';

interface HttpsAnswer { status: number; body: string; subject: string; serial: string }

/** GET over HTTPS trusting only `ca`: the server's chain is checked for real. */
function httpsGet(port: number, path: string, ca: Buffer): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', servername: 'localhost', port, path, ca, agent: false }, (res) => {
      const peer = (res.socket as TLSSocket).getPeerCertificate();
      let body = '';
      res.on('data', (d: Buffer) => { body += d.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, subject: peer.subject.CN as string, serial: peer.serialNumber }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('HTTPS beside HTTP: same routes, verified chain, https access lists, reload keeps the listener', async (t) => {
  const files = tlsFiles(t);
  const { certFile, keyFile, ca } = files;

  const app = await startApp(t, {
    config: {
      tls: { enable: true, address: '127.0.0.1:0', cert_file: certFile, key_file: keyFile },
      // the loopback client is refused on HTTPS only
      api: { access: { https: { block: ['127.0.0.1/32'] } } },
    },
  });
  const port = app.service.httpsPort;
  t.ok(port > 0 && port !== app.service.port, 'a second listener');

  const ping = await httpsGet(port, '/ping', ca);
  t.equal(ping.status, 200);
  t.equal(ping.body, 'pong');
  t.equal(ping.subject, 'first');

  const api = await httpsGet(port, '/api/v3/config', ca);
  t.equal(api.status, 403, 'api.access.https applies on HTTPS');
  t.same(JSON.parse(api.body), { code: 403, message: 'Forbidden', details: ['Forbidden'] });
  t.equal((await app.request('GET', '/api/v3/config')).status, 200, 'not on HTTP');

  await t.rejects(httpsGet(port, '/ping', makeChain(files.dir, 'other').ca), 'a client not trusting the CA refuses the chain');

  // a renewed certificate (same CA) is picked up by a config reload, on the same port
  files.renew('second');
  await app.service.reload();
  t.equal(app.service.httpsPort, port, 'the HTTPS port is kept');
  const after = await httpsGet(port, '/ping', ca);
  t.equal(after.status, 200);
  t.equal(after.subject, 'second', 'the new certificate is served');
});

t.test('no HTTPS listener when TLS is off', async (t) => {
  const app = await startApp(t);
  t.equal(app.service.httpsPort, 0);
  t.equal(app.service.httpsUrl, undefined);
});
