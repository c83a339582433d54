import t from 'tap';
import { truncateSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { Duplex } from 'node:stream';
import { startApp } from '../../helpers/app.ts';
import { tlsFiles } from '../../helpers/certs.ts';
import { waitFor } from '../../helpers/wait.ts';
import { SendStall } from '../../../core/http/send-stall.ts';

/*
 * `http.send_timeout_seconds`: a client that takes no byte of a response while more waits is cut
 * (3,527 paused downloads from 16 addresses held 692 MB, for as long as they liked); a quiet
 * connection with nothing waiting, and a slow reader that takes bytes, are not.
 */

/** A socket stand-in whose output counters the test sets. */
function fake(): Duplex & { bytesWritten: number; pending: number } {
  const d = new Duplex({ read() {}, write(_c, _e, cb) { cb(); } }) as Duplex & { bytesWritten: number; pending: number };
  d.bytesWritten = 0;
  d.pending = 0;
  Object.defineProperty(d, 'writableLength', { get: () => d.pending });
  return d;
}

t.test('the watch: stalled output is cut after the limit; idle or moving output is not', async (t) => {
  const stall = new SendStall(10_000);
  const [stuck, idle, slow] = [fake(), fake(), fake()];
  for (const s of [stuck, idle, slow]) stall.watch(s);
  t.teardown(() => { for (const s of [stuck, idle, slow]) s.destroy(); });
  stuck.bytesWritten = 5000; stuck.pending = 1000;
  slow.bytesWritten = 5000; slow.pending = 1000;
  // the first look sees where each stands; three more find the stuck one 12 s without progress
  for (let i = 0; i < 4; i++) {
    stall.check(4000);
    slow.pending -= 100; // the client takes a little each time
  }
  t.ok(stuck.destroyed, 'no byte taken for 12 s of a 10 s limit: closed');
  t.notOk(idle.destroyed, 'nothing waiting: idle, not stalled');
  t.notOk(slow.destroyed, 'a slow reader is no stalled one');
  stall.update(0);
  slow.pending = 1000;
  for (let i = 0; i < 5; i++) stall.check(4000);
  t.notOk(slow.destroyed, '0: never');
  await waitFor(() => stall.size === 2 || undefined, { timeout: 2000, what: 'the closed one forgotten' });
});

/**
 * A raw GET of `path` that reads nothing for `pauseMs`, then reads `bytes` every `gapMs` (all at
 * once with 0): the bytes it got when the connection ended.
 */
function fetchRaw(open: () => Socket, path: string, pauseMs: number, o: { bytes?: number; gapMs?: number } = {}): Promise<number> {
  return new Promise<number>((resolve) => {
    const s = open();
    s.once(s.constructor.name === 'TLSSocket' ? 'secureConnect' : 'connect', () => s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
    let got = 0;
    s.on('error', () => resolve(got));
    s.on('close', () => resolve(got));
    s.pause();
    let since = 0;
    s.on('data', (d: Buffer) => {
      got += d.length;
      since += d.length;
      // a reader that takes `bytes`, then rests `gapMs`
      if (o.gapMs && since >= (o.bytes ?? 65536)) {
        since = 0;
        s.pause();
        setTimeout(() => s.resume(), o.gapMs);
      }
    });
    const take = () => { s.resume(); };
    setTimeout(take, pauseMs);
  });
}

t.test('a paused download is cut after http.send_timeout_seconds, over HTTP and HTTPS, from disk and memory; readers get it all', async (t) => {
  const tls = tlsFiles(t);
  const app = await startApp(t, { config: {
    http: { send_timeout_seconds: 1, threads: 0 }, tls: { enable: true, address: '127.0.0.1:0', cert_file: tls.certFile, key_file: tls.keyFile },
    storage: { memory: { auth: { enable: false } } },
  } });
  const file = join(app.dir, 'disk', 'big.bin');
  writeFileSync(file, '');
  truncateSync(file, 64 * 1024 * 1024);
  const SIZE = 64 * 1024 * 1024;
  const port = Number(new URL(app.url).port);
  const https = app.service.httpsPort;
  const plain = () => connect(port, '127.0.0.1');
  const secure = () => tlsConnect({ port: https, host: '127.0.0.1', rejectUnauthorized: false });

  t.ok(await fetchRaw(plain, '/big.bin', 4000) < SIZE, 'HTTP: a client that took nothing for 4 s was cut');
  t.ok(await fetchRaw(secure, '/big.bin', 4000) < SIZE, 'HTTPS: the same (what TLS encrypted waits on the TCP socket)');
  t.ok(await fetchRaw(plain, '/big.bin', 0) > SIZE, 'a reader gets it all');

  // an in-memory file goes out in one write: a slow reader that keeps taking bytes is no stalled one
  const mem = 16 * 1024 * 1024;
  t.equal((await app.request('PUT', '/memfs/big.bin', { raw: Buffer.alloc(mem) })).status, 201);
  // (~10 MB/s: 1.6 s for it, the one write done only at its end; slower, TCP's own window updates
  // on loopback can pause the sender for over a second, this test's limit: the default is 60 s)
  const slow = await fetchRaw(plain, '/memfs/big.bin', 0, { bytes: 512 * 1024, gapMs: 50 });
  t.ok(slow > mem, `a reader that keeps taking bytes gets the in-memory file whole (${slow} bytes)`);
  t.ok(await fetchRaw(plain, '/memfs/big.bin', 4000) < mem, 'a paused one of it is cut');
});

t.test('the watch has no timer without connections or without a limit', async (t) => {
  const stall = new SendStall(0);
  const s = fake();
  stall.watch(s);
  s.bytesWritten = 10; s.pending = 10;
  for (let i = 0; i < 50; i++) stall.check(5000);
  t.notOk(s.destroyed, 'no limit: never cut');
  stall.update(1000);
  for (let i = 0; i < 2; i++) stall.check(1000);
  t.ok(s.destroyed, 'a limit set on the open connections applies to them');
});
