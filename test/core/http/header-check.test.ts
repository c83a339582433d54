import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { checkHeadersWhileConnected, headerCheckArmed } from '../../../core/http/header-check.ts';
import { answerClientError, serverOptions, type ListenerBounds } from '../../../core/http/listener-bounds.ts';
import { tlsFiles } from '../../helpers/certs.ts';
import { waitFor } from '../../helpers/wait.ts';
import { exchange, open, served, type RawOptions } from './raw-client.ts';

/**
 * Node's header-timeout check runs only while a listener holds a connection (issue 46.2: it was
 * an idle service's only wake-up a second): stopped while idle, started again by the next
 * connection, and a connection whose headers never end is still answered 408 each time.
 */

const BOUNDS: ListenerBounds = { maxHeaderBytes: 8192, headerTimeoutMs: 1000, bodyTimeoutMs: 1000, maxPerAddress: 0, sendStallMs: 0, trusted: [] };

async function listening(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function cycles(t: Test, server: http.Server, o: RawOptions): Promise<void> {
  server.on('clientError', answerClientError);
  t.ok(checkHeadersWhileConnected(server), 'node\'s setup is found on this runtime');
  const port = await listening(server);
  t.teardown(() => { server.closeAllConnections(); server.close(); });
  t.notOk(headerCheckArmed(server), 'listening, no connection: no check');
  for (const round of [1, 2]) {
    const kept = await open(port, o);
    await waitFor(() => headerCheckArmed(server), { what: 'the check armed by a connection' });
    t.ok(await served(kept), `round ${round}: a request is served`);
    const slow = await exchange(port, 'GET / HTTP/1.1\r\nHost: x\r\n', o);
    t.equal(slow.status, 408, `round ${round}: headers that never end are answered 408`);
    t.ok(headerCheckArmed(server), 'still armed while a connection is open');
    kept.destroy();
    await waitFor(() => !headerCheckArmed(server), { what: 'the check stopped after the last connection' });
  }
}

t.test('HTTP: the check runs only while connected, and 408 still comes', async (t) => {
  await cycles(t, http.createServer(serverOptions(BOUNDS), (_req, res) => res.end('ok')), {});
});

t.test('HTTPS: the same', async (t) => {
  const files = tlsFiles(t);
  const server = https.createServer({ cert: readFileSync(files.certFile), key: readFileSync(files.keyFile), ...serverOptions(BOUNDS) }, (_req, res) => res.end('ok'));
  await cycles(t, server, { tls: { ca: files.ca } });
});

t.test('a socket closed before the listener saw it is not counted', async (t) => {
  const server = http.createServer(serverOptions(BOUNDS));
  checkHeadersWhileConnected(server);
  await listening(server);
  t.teardown(() => server.close());
  const { PassThrough } = await import('node:stream');
  const gone = new PassThrough();
  gone.destroy();
  await new Promise((r) => gone.once('close', r));
  server.emit('connection', gone);
  t.notOk(headerCheckArmed(server), 'no check for a socket that had closed already');
});
