import t from 'tap';
import { connect, type Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { threadsConfig } from './helpers.ts';

/* Upgrade requests (WebSocket) reach main's server through any thread, joined byte for byte. */

/** Sends `text` on a fresh connection and collects what comes back until `done` says so. */
async function exchange(url: string, text: string, done: (got: string) => boolean): Promise<{ got: string; sock: Socket }> {
  const u = new URL(url);
  const sock = connect(Number(u.port), u.hostname);
  let got = '';
  await new Promise<void>((resolve, reject) => {
    sock.on('data', (d) => {
      got += d.toString();
      if (done(got)) resolve();
    });
    sock.on('error', reject);
    sock.on('close', () => resolve());
    sock.write(text);
  });
  return { got, sock };
}

const upgrade = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n`;

t.test('an upgrade reaches a listener on main through every thread; the sockets are joined both ways', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2) });
  const server = app.service.app.http.server;
  const seen: string[] = [];
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    seen.push(req.url!);
    socket.on('error', () => {});
    socket.on('end', () => socket.end());
    socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
    if (head.length > 0) socket.write(head.toString().toUpperCase());
    socket.on('data', (d: Buffer) => socket.write(d.toString().toUpperCase()));
  };
  server.on('upgrade', onUpgrade);
  t.teardown(() => { server.off('upgrade', onUpgrade); });
  const before = await app.service.threads.stats();
  let n = 0;
  const bad: string[] = [];
  await waitFor(async () => {
    for (let i = 0; i < 6; i++, n++) {
      const { got, sock } = await exchange(app.url, `${upgrade(`/echo/${n}`)}early-${n}`, (g) => g.includes(`EARLY-${n}`));
      if (!got.startsWith('HTTP/1.1 101')) bad.push(got);
      // after the upgrade: both ways, several times
      for (const word of ['one', 'two']) {
        const echoed = await new Promise<string>((resolve) => {
          sock.once('data', (d) => resolve(d.toString()));
          sock.write(`${word}-${n}`);
        });
        if (echoed !== `${word.toUpperCase()}-${n}`) bad.push(echoed);
      }
      sock.destroy();
    }
    const now = await app.service.threads.stats();
    return now.every((s, i) => s.forwarded > before[i]!.forwarded);
  }, { timeout: 30_000, what: 'both threads tunnelling upgrades' });
  t.same(bad, [], 'every upgrade answered 101 and echoed, the bytes sent with the request too');
  t.equal(seen.length, n, 'each reached main once');
});

t.test('without an upgrade listener, an upgrade request gets main\'s plain answer on every listener', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2) });
  const before = await app.service.threads.stats();
  const statuses = new Set<string>();
  await waitFor(async () => {
    for (let i = 0; i < 6; i++) {
      const { got, sock } = await exchange(app.url, upgrade('/memfs/nothing.ts'), (g) => g.includes('\r\n\r\n') && g.includes('}'));
      statuses.add(got.split('\r\n')[0]!);
      sock.destroy();
    }
    const now = await app.service.threads.stats();
    return now.every((s, i) => s.forwarded > before[i]!.forwarded);
  }, { timeout: 30_000, what: 'both threads passing upgrades on' });
  t.same([...statuses], ['HTTP/1.1 404 Not Found']);
});
