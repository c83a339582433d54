import t, { type Test } from 'tap';
import type { Socket } from 'node:net';
import { startCli, type CliApp } from '../../helpers/cli.ts';
import { waitFor } from '../../helpers/wait.ts';
import { open } from './raw-client.ts';

/*
 * 600 connections each sending 1 MB of headers that never end (issue 27: +776 MB of RSS in 5 s,
 * never given back). With the defaults (64 KiB of headers, 256 connections per address) the
 * service, its own OS process, stays within 100 MB of its RSS before the attack, comes back
 * after, and serves another client meanwhile. How fast it serves is measured by
 * bench/attacks/http.ts; here it must answer at all.
 */

const MB = 1024 * 1024;
const BOUND = 100 * MB;
const CONNECTIONS = 600;
const ATTACKER = '127.0.0.2';

/** Writes `bytes` of one never-ending header line, in 16 KiB pieces, until done or closed. */
function unfinishedHeaders(s: Socket, bytes: number): Promise<void> {
  return new Promise((resolve) => {
    const piece = Buffer.alloc(16 * 1024, 'a');
    let sent = 0;
    const pump = (): void => {
      while (sent < bytes && !s.destroyed) {
        sent += piece.length;
        if (!s.write(piece)) {
          s.once('drain', pump);
          return;
        }
      }
      resolve();
    };
    s.once('close', () => resolve());
    s.write('GET /api HTTP/1.1\r\nHost: x\r\nX-Filler: ', pump);
  });
}

async function attack(t: Test, app: CliApp): Promise<void> {
  const port = Number(new URL(app.url).port);
  const before = app.memory().rss;
  const socks: Socket[] = [];
  t.teardown(() => { for (const s of socks) s.destroy(); });
  const sending = Array.from({ length: CONNECTIONS }, async () => {
    const s = await open(port, { localAddress: ATTACKER }).catch(() => undefined);
    if (!s) return;
    socks.push(s);
    await unfinishedHeaders(s, MB);
  });
  // a legitimate client (another address) while the attack is under way
  const legit = await fetch(`${app.url}/api`);
  t.equal(legit.status, 200, 'another client is served during the attack');
  await Promise.all(sending);
  // the high-water mark: what the attack made the process hold at its worst
  const peak = app.memory().peak;
  t.ok(peak - before < BOUND, `peak RSS within 100 MB of before (+${Math.round((peak - before) / MB)} MB)`);
  for (const s of socks) s.destroy();
  const after = await waitFor(() => {
    const rss = app.memory().rss;
    return rss - before < BOUND ? rss : undefined;
  }, { what: 'RSS back within 100 MB of before' });
  t.ok(after - before < BOUND, `RSS after the attack (+${Math.round((after - before) / MB)} MB)`);
  t.equal((await fetch(`${app.url}/api`)).status, 200, 'still serving');
}

t.test('600 connections with 1 MB of unfinished headers: RSS bounded, another client served', async (t) => {
  const app = await startCli(t);
  await attack(t, app);
});

t.test('the same with serving threads: their listeners are bounded too', async (t) => {
  const app = await startCli(t, { http: { threads: 2 } });
  await attack(t, app);
});
