import t, { type Test } from 'tap';
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { startApp, type TestApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';

/*
 * Issue 44.1: a reload with unchanged listener settings keeps every connection, the API's too.
 * The reload rebuilt fastify and its server: every keep-alive connection (a browser's
 * restreamer-ui, a player fetching playlists, the Python client's session) was closed and the
 * port bound again. Now the service keeps the listener while `address` and the threads' port
 * sharing stay; the next request on a kept connection is answered by the new app.
 */

interface Answer { status: number; body: string; socket: Socket }

/** GET over `agent` (one keep-alive socket): the answer and the socket it came on. */
function get(agent: Agent, port: number, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent }, (res: IncomingMessage) => {
      const socket = res.socket as Socket;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), socket }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function reloadWith(t: Test, app: TestApp, change: Record<string, unknown>, host = '127.0.0.1'): Promise<void> {
  const before = app.service.app;
  const cfg = (await app.request('GET', '/api/v3/config')).body.config as Record<string, unknown>;
  const put = await app.request('PUT', '/api/v3/config', { body: { ...cfg, ...change } });
  t.equal(put.status, 200, `stored (${put.text.slice(0, 200)})`);
  t.equal((await app.request('GET', '/api/v3/config/reload')).status, 200, 'reload asked');
  await waitFor(() => app.service.app !== before, { what: 'the reloaded app' });
  await waitFor(async () => (await fetch(`http://${host}:${app.service.port}/api/v3/config`)).status === 200, { what: 'the new app answering' });
}

t.test('a keep-alive connection survives a reload that leaves the address alone, answered by the new app', async (t) => {
  const app = await startApp(t);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const port = app.service.port;
  const first = await get(agent, port, '/api/v3/config');
  t.equal(first.status, 200);
  let closed = false;
  first.socket.once('close', () => { closed = true; });
  await reloadWith(t, app, { name: 'after-the-reload' });
  t.equal(app.service.port, port, 'the same port');
  const second = await get(agent, port, '/api/v3/config');
  t.equal(second.status, 200);
  t.equal(second.socket, first.socket, 'on the same connection');
  t.notOk(closed, 'which was never closed');
  t.equal(JSON.parse(second.body).config.name, 'after-the-reload', 'answered by the new app');
  // a second reload, and requests meanwhile on the kept connection: each is answered (200 or 503)
  const during: number[] = [];
  let going = true;
  const asking = (async () => {
    while (going) during.push(await get(agent, port, '/api/v3/config').then((a) => a.status, () => 0));
  })();
  await reloadWith(t, app, { name: 'twice' });
  going = false;
  await asking;
  t.ok(during.every((s) => s === 200 || s === 503), `every answer meanwhile is 200 or 503 (${[...new Set(during)].join(', ')})`);
  t.ok(during.includes(503), 'some came while the apps changed');
  const third = await get(agent, port, '/api/v3/config');
  t.equal(third.socket, first.socket, 'still the same connection (a 503 between two apps keeps it)');
  t.equal(JSON.parse(third.body).config.name, 'twice');
});

t.test('a reload that moves the address closes the old listener and its connections', async (t) => {
  const app = await startApp(t);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const port = app.service.port;
  const first = await get(agent, port, '/api/v3/config');
  let closed = false;
  first.socket.once('close', () => { closed = true; });
  await reloadWith(t, app, { address: '127.0.0.2:0' }, '127.0.0.2');
  await waitFor(() => closed, { what: 'the old connection closed' });
  t.pass('the old connection is closed');
  const moved = await get(new Agent(), app.service.port, '/api/v3/config').catch(() => undefined);
  t.equal(moved, undefined, 'nothing answers on 127.0.0.1 at the new port');
  const there = await new Promise<number>((resolve, reject) => {
    httpRequest({ host: '127.0.0.2', port: app.service.port, path: '/api/v3/config' }, (res) => { res.resume(); resolve(res.statusCode ?? 0); })
      .on('error', reject).end();
  });
  t.equal(there, 200, 'the new address answers');
});

t.test('a kept listener closes with the service: no connection outlives it', async (t) => {
  const app = await startApp(t);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const first = await get(agent, app.service.port, '/api/v3/config');
  let closed = false;
  first.socket.once('close', () => { closed = true; });
  await reloadWith(t, app, { name: 'kept' });
  await app.service.close();
  await waitFor(() => closed, { what: 'the kept connection closed by the stop' });
  t.pass('closed');
});
