import t from 'tap';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { fresh } from './helpers.ts';
import { tlsFiles } from '../../../helpers/certs.ts';
import { freshTls, overEveryThread, tlsThreadsConfig } from './tls-helpers.ts';

/*
 * HTTPS on serving threads: each thread listens on the HTTPS port too (reusePort, main's
 * certificate), answers the file fast path there and forwards the rest to main as HTTPS.
 * Which listener took a connection is seen in the threads' counters (served / forwarded).
 */

const body = (i: number) => Buffer.from(`tls segment ${i} `.repeat(40 * (i + 1)));

t.test('HTTPS over fresh connections reaches every thread, with the right bytes for memfs and disk files', async (t) => {
  const files = tlsFiles(t);
  const app = await startApp(t, { config: tlsThreadsConfig(2, files) });
  const port = app.service.httpsPort;
  t.ok(port > 0, 'HTTPS listening');
  // uploads over HTTPS take the same way as over HTTP
  for (let i = 0; i < 4; i++) t.equal((await freshTls(port, `/memfs/s/${i}.ts`, files.ca, { method: 'PUT', body: body(i) })).status, 201);
  await writeFile(join(app.dir, 'disk', 'd.bin'), body(7));
  let wrong = 0;
  let n = 0;
  await overEveryThread(app, 'served', async () => {
    for (let k = 0; k < 12; k++, n++) {
      const disk = n % 3 === 0;
      const r = await freshTls(port, disk ? '/d.bin' : `/memfs/s/${n % 4}.ts`, files.ca);
      if (r.status !== 200 || !r.body.equals(disk ? body(7) : body(n % 4))) wrong++;
    }
  }, 'both threads answering HTTPS reads');
  t.equal(wrong, 0, 'every read over HTTPS got its bytes');
  // HTTP still served by the threads as before
  t.ok((await fresh(`${app.url}/memfs/s/1.ts`)).body.equals(body(1)));
});

t.test('a forwarded API request over HTTPS reaches main as HTTPS (api.access.https applies, not the http list)', async (t) => {
  const files = tlsFiles(t);
  // the loopback client is refused on HTTP only: an HTTPS request main took for HTTP would be refused
  const app = await startApp(t, { config: tlsThreadsConfig(2, files, { api: { access: { http: { block: ['127.0.0.1/32'] } } } }) });
  const port = app.service.httpsPort;
  const statuses = new Set<number>();
  await overEveryThread(app, 'forwarded', async () => {
    for (let k = 0; k < 10; k++) {
      const r = await freshTls(port, '/api/v3/process', files.ca);
      statuses.add(r.status);
      if (r.status === 200) t.same(JSON.parse(r.body.toString()), []);
    }
  }, 'both threads forwarding HTTPS API requests');
  t.same([...statuses], [200], 'allowed on HTTPS through every listener');
  const http = new Set<number>();
  await overEveryThread(app, 'forwarded', async () => {
    for (let k = 0; k < 10; k++) http.add((await fresh(`${app.url}/api/v3/process`)).status);
  }, 'both threads forwarding HTTP API requests');
  t.same([...http], [403], 'refused on HTTP through every listener');
});

t.test('a killed thread is replaced and serves HTTPS again', async (t) => {
  const files = tlsFiles(t);
  const app = await startApp(t, { config: tlsThreadsConfig(2, files) });
  const port = app.service.httpsPort;
  t.equal((await freshTls(port, '/memfs/k.ts', files.ca, { method: 'PUT', body: body(2) })).status, 201);
  const threads = app.service.threads;
  await threads.kill(0);
  let failed = 0;
  for (let k = 0; k < 12; k++) {
    const r = await freshTls(port, '/memfs/k.ts', files.ca);
    if (r.status !== 200 || !r.body.equals(body(2))) failed++;
  }
  t.equal(failed, 0, 'the other listeners serve HTTPS meanwhile');
  await waitFor(() => threads.generations()[0] === 2, { timeout: 30_000, what: 'thread 0 replaced' });
  await waitFor(async () => {
    const before = (await threads.stats())[0]!.served;
    for (let k = 0; k < 8; k++) {
      const r = await freshTls(port, '/memfs/k.ts', files.ca);
      if (r.status !== 200 || !r.body.equals(body(2))) failed++;
    }
    return (await threads.stats())[0]!.served > before;
  }, { timeout: 30_000, what: 'the new thread 0 serving HTTPS' });
  t.equal(failed, 0);
});

t.test('chunked uploads over HTTPS: within the budget a thread takes them, beyond it main answers (its 507)', async (t) => {
  const files = tlsFiles(t);
  const app = await startApp(t, { config: tlsThreadsConfig(2, files, { storage: { memory: { auth: { enable: false }, max_size_mbytes: 1, purge: false } } }) });
  const port = app.service.httpsPort;
  const chunked = { 'transfer-encoding': 'chunked' };
  let wrong = 0;
  let n = 0;
  await overEveryThread(app, 'served', async () => {
    for (let k = 0; k < 6; k++, n++) {
      const put = await freshTls(port, `/memfs/u/${n}.ts`, files.ca, { method: 'PUT', body: body(n % 5), headers: chunked });
      const back = await freshTls(port, `/memfs/u/${n}.ts`, files.ca);
      if (put.status !== 201 || !back.body.equals(body(n % 5))) wrong++;
    }
  }, 'both threads taking chunked HTTPS uploads');
  t.equal(wrong, 0, 'stored with the bytes sent');
  const huge = Buffer.alloc(1_500_000, 3);
  const statuses = new Set<number>();
  await overEveryThread(app, 'forwarded', async () => {
    for (let k = 0; k < 4; k++) statuses.add((await freshTls(port, '/memfs/huge.ts', files.ca, { method: 'PUT', body: huge, headers: chunked })).status);
  }, 'both threads passing over-budget HTTPS uploads to main');
  t.same([...statuses], [507]);
  t.equal((await freshTls(port, '/memfs/huge.ts', files.ca)).status, 404);
});
