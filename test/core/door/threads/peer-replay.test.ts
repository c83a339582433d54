import t from 'tap';
import { fileURLToPath } from 'node:url';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { signPeer } from '../../../../core/door/threads/peer-header.ts';
import { THREAD_PEER_HEADER } from '../../../../core/door/threads/module.ts';
import { fresh, threadsConfig } from './helpers.ts';

const FIXTURE = fileURLToPath(new URL('../../http/fixtures/forward-plugin.ts', import.meta.url));

/*
 * Issue 27.5: the serving threads' signed peer header is not remembered against replays (main
 * keeps no nonces for that hop), so a value seen once would vouch for its request again within
 * the window. Main believes it only on its internal loopback listener: sent to the public port,
 * even correctly signed for that very request, it is stripped and the TCP peer counts.
 */

t.test('a correctly signed thread peer header sent to the public port counts for nothing', async (t) => {
  const app = await startApp(t, { config: threadsConfig(0, { api: { access: { http: { allow: [], block: ['127.0.0.1/32'] }, trusted_proxies: [] } } }) });
  const key = app.service.threads.key;
  const posing = await fresh(`${app.url}/api/v3/process`, { headers: { [THREAD_PEER_HEADER]: signPeer(key, '192.0.2.1', false, 'GET', '/api/v3/process') } });
  t.equal(posing.status, 403, 'judged as 127.0.0.1 (blocked), not as the address the header names');
  const plain = await fresh(`${app.url}/api/v3/process`);
  t.equal(plain.status, 403);
});

t.test('requests the threads forward still carry their client', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2, { api: { access: { http: { allow: [], block: ['127.0.0.1/32'] }, trusted_proxies: [] } } }) });
  const statuses = new Set<number>();
  await waitFor(async () => {
    for (let n = 0; n < 10; n++) {
      statuses.add((await fresh(`${app.url}/api/v3/process`, { headers: { [THREAD_PEER_HEADER]: signPeer(app.service.threads.key, '192.0.2.1', false, 'GET', '/api/v3/process') } })).status);
    }
    return (await app.service.threads.stats()).every((s) => s.forwarded > 0);
  }, { timeout: 30_000, what: 'both threads forwarding' });
  t.same([...statuses], [403], 'on main and through each thread: the client is 127.0.0.1 (blocked)');
});

t.test('a peer tap that names the client first: the thread header still never reaches a route', async (t) => {
  const app = await startApp(t, { config: { ...threadsConfig(2), plugins: ['memfs', FIXTURE] } });
  const seen = new Set<string>();
  await waitFor(async () => {
    for (let n = 0; n < 10; n++) {
      const r = await fresh(`${app.url}/test/headers`, { headers: { 'x-test-peer': '192.0.2.5 ok' } });
      const body = JSON.parse(r.body.toString()) as { names: string[]; client: string };
      seen.add(`${body.client} ${body.names.filter((h) => h.startsWith('x-')).join(',')}`);
    }
    return (await app.service.threads.stats()).every((s) => s.forwarded > 0);
  }, { timeout: 30_000, what: 'both threads forwarding' });
  t.same([...seen], ['192.0.2.5 '], 'the tap\'s client, and neither header left for the route');
});
