import t from 'tap';
import { randomBytes } from 'node:crypto';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { signPeer } from '../../../../core/door/threads/peer-header.ts';
import { THREAD_PEER_HEADER } from '../../../../core/door/threads/module.ts';
import { fresh, threadsConfig } from './helpers.ts';

/*
 * A thread forwards over loopback: were the client's own peer lost on the way, every client of a
 * thread would look like 127.0.0.1 to the IP lists, the trusted proxies and the localhost
 * exemption. The listeners here take IPv4 and IPv6 (`[::]`), and the block list names ::1, so a
 * client on ::1 must be refused whichever listener the kernel gives it, and one on 127.0.0.1 not.
 */
const config = threadsConfig(2, {
  address: '[::]:0',
  api: { access: { http: { allow: [], block: ['::1/128'] }, trusted_proxies: [] } },
});

t.test('the IP block list holds on every thread (the client peer crosses the thread)', async (t) => {
  const app = await startApp(t, { config });
  const port = app.service.port;
  const v6: number[] = [];
  await waitFor(async () => {
    for (let n = 0; n < 20; n++) v6.push((await fresh(`http://[::1]:${port}/api/v3/process`)).status);
    const stats = await app.service.threads.stats();
    return stats.every((s) => s.forwarded >= 5);
  }, { timeout: 30_000, what: 'both threads forwarding' });
  t.same([...new Set(v6)], [403], 'refused on every listener');
  const v4 = new Set<number>();
  for (let n = 0; n < 20; n++) v4.add((await fresh(`http://127.0.0.1:${port}/api/v3/process`)).status);
  t.notOk(v4.has(403), `127.0.0.1 is not refused (${[...v4].join(',')})`);
});

t.test('a client cannot forge the thread peer header', async (t) => {
  const app = await startApp(t, { config });
  const port = app.service.port;
  // ::1 posing as 192.0.2.1: with a guessed signature, a foreign key's or none; on main and on threads
  const forged = [`192.0.2.1 ${'a'.repeat(64)}`, signPeer(randomBytes(32), '192.0.2.1', false, 'GET', '/api/v3/process'), '192.0.2.1'];
  const statuses = new Set<number>();
  for (let n = 0; n < 30; n++) {
    const r = await fresh(`http://[::1]:${port}/api/v3/process`, { headers: { [THREAD_PEER_HEADER]: forged[n % forged.length]! } });
    statuses.add(r.status);
  }
  t.same([...statuses], [403]);
});

t.test('api.read_only holds on every listener (writes reach main, which refuses them)', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2, { api: { read_only: true } }) });
  const codes = new Set<string>();
  await waitFor(async () => {
    for (let n = 0; n < 10; n++) {
      const r = await fresh(`${app.url}/api/v3/process`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      codes.add(`${r.status} ${JSON.parse(r.body.toString()).details?.[0]}`);
    }
    return (await app.service.threads.stats()).every((s) => s.forwarded > 0);
  }, { timeout: 30_000, what: 'writes through both threads' });
  t.same([...codes], ['403 The API is read-only (api.read_only)']);
});
