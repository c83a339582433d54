import t from 'tap';
import { connect } from 'node:net';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { fresh, threadsConfig } from './helpers.ts';

/*
 * ffmpeg does not wait for its PUTs' answers: with threads, a playlist stored by main can list a
 * segment whose upload another loop is still receiving or committing. A read of a path being
 * uploaded waits for that upload instead of answering 404 (plugins/memfs/pending.ts).
 */
t.test('a read of a file being uploaded, on any listener, waits for the upload and gets its bytes', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2) });
  const u = new URL(app.url);
  const url = `${app.url}/memfs/live/slow.ts`;
  const sock = connect(Number(u.port), u.hostname);
  t.teardown(() => sock.destroy());
  await new Promise((r) => sock.once('connect', r));
  const part = (s: string) => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
  sock.write(`PUT /memfs/live/slow.ts HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${part('first half,')}`);
  // reads before the service has seen the upload begin may be a 404; from then on a read waits.
  // A read counts as waiting when a miss of another path, asked at the same moment, was answered
  // while it was not (on a busy machine a plain 404 can take longer than any fixed delay)
  const early: Array<Promise<{ status: number; body: Buffer }>> = [];
  await waitFor(async () => {
    let answered = false;
    const read = fresh(url);
    void read.then(() => { answered = true; }, () => { answered = true; });
    early.push(read);
    const control = await fresh(`${app.url}/memfs/live/nobody-writes-this.ts`);
    if (control.status !== 404) throw new Error(`control read: ${control.status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    return !answered;
  }, { timeout: 20_000, what: 'a read waiting for the upload' });
  const reads = [0, 1, 2, 3, 4, 5].map(() => fresh(url));
  sock.write(`${part(' second half')}0\r\n\r\n`);
  const answer = await new Promise<string>((resolve) => sock.once('data', (d) => resolve(d.toString())));
  t.match(answer, /^HTTP\/1\.1 201/);
  for (const r of [early.at(-1)!, ...reads]) {
    const got = await r;
    t.equal(got.status, 200);
    t.equal(got.body.toString(), 'first half, second half');
  }
});
