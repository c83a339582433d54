import t from 'tap';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BodyDeadlines } from '../../../core/http/body-deadlines.ts';
import { ThreadTrafficMeter } from '../../../core/door/threads/traffic.ts';
import type { TestLike } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';

/*
 * A listener's periodic jobs run only while they have work (issue 46.2): the body deadlines' sweep
 * while a body is on its way, the traffic meter's reports while a connection lives. Each stops on
 * its own once idle and starts again with the next body or connection.
 */

async function listen(t: TestLike, server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  return (server.address() as AddressInfo).port;
}

/** A POST whose body comes in two halves, the second when `more` resolves; its answer's status. */
function slowPost(port: number, more: Promise<void>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', method: 'POST', path: '/', agent: false, headers: { 'content-length': '10' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.write('12345');
    void more.then(() => req.end('67890'));
  });
}

t.test('the body deadlines sweep while a body arrives, stop after, and start again', async (t) => {
  const deadlines = new BodyDeadlines(30_000, () => false);
  t.teardown(() => deadlines.close());
  const server = createServer((req, res) => {
    deadlines.track(req, res);
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  const port = await listen(t, server);
  t.equal(deadlines.sweeping, false, 'nothing tracked: no timer');
  for (const round of [1, 2]) {
    let finish!: () => void;
    const answer = slowPost(port, new Promise<void>((r) => { finish = r; }));
    await waitFor(() => deadlines.sweeping, { what: `round ${round}: the sweep runs while the body arrives`, timeout: 5_000 });
    t.equal(deadlines.size, 1, `round ${round}: one body tracked`);
    finish();
    t.equal(await answer, 200);
    await waitFor(() => !deadlines.sweeping, { what: `round ${round}: the sweep stops once no body is tracked`, timeout: 10_000 });
    t.pass(`round ${round}: stopped on its own`);
  }
});

t.test('the traffic meter reports while a connection lives, stops after, and starts again', async (t) => {
  const server = createServer((_req, res) => res.end('hello'));
  const reports: number[] = [];
  const meter = new ThreadTrafficMeter(server, (peers) => reports.push(peers.reduce((n, p) => n + p.tx, 0)));
  t.teardown(() => meter.close());
  const port = await listen(t, server);
  t.equal(meter.reporting, false, 'no connection: no timer');
  for (const round of [1, 2]) {
    let finish!: () => void;
    const answer = slowPost(port, new Promise<void>((r) => { finish = r; }));
    await waitFor(() => meter.reporting, { what: `round ${round}: reports while the connection lives`, timeout: 5_000 });
    finish();
    t.equal(await answer, 200);
    await waitFor(() => !meter.reporting, { what: `round ${round}: the reports stop once no connection lives`, timeout: 10_000 });
    t.ok(reports.reduce((a, b) => a + b, 0) > 0, `round ${round}: the bytes sent were reported`);
  }
});
