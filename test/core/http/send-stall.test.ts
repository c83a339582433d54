import t from 'tap';
import { truncateSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Duplex } from 'node:stream';
import { startApp } from '../../helpers/app.ts';
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

t.test('a paused download is cut after http.send_timeout_seconds; the whole file comes to a reader', async (t) => {
  const app = await startApp(t, { config: { http: { send_timeout_seconds: 1, threads: 0 } } });
  const file = join(app.dir, 'disk', 'big.bin');
  writeFileSync(file, '');
  truncateSync(file, 64 * 1024 * 1024);
  const { port } = new URL(app.url);
  const fetchRaw = (pauseMs: number) => new Promise<number>((resolve, reject) => {
    const s = connect(Number(port), '127.0.0.1', () => s.write('GET /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    let got = 0;
    s.on('data', (d: Buffer) => { got += d.length; });
    s.on('error', () => resolve(got));
    s.on('close', () => resolve(got));
    s.on('timeout', () => reject(new Error('no close')));
    s.pause();
    setTimeout(() => s.resume(), pauseMs);
  });
  const paused = await fetchRaw(4000);
  t.ok(paused < 64 * 1024 * 1024, `a client that took nothing for 4 s got part of it only (${paused} bytes): its connection was closed`);
  const reader = await fetchRaw(0);
  t.ok(reader > 64 * 1024 * 1024, `a reader gets it all (${reader} bytes with the headers)`);
});
