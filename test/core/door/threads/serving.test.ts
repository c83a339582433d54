import t from 'tap';
import { readFile, writeFile } from 'node:fs/promises';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { fresh, threadsConfig } from './helpers.ts';

const body = (i: number) => Buffer.from(`segment ${i} `.repeat(50 * (i + 1)));

t.test('requests over fresh connections reach every thread and every answer has the right bytes', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2) });
  for (let i = 0; i < 10; i++) t.equal((await fresh(`${app.url}/memfs/a/${i}.ts`, { method: 'PUT', body: body(i) })).status, 201);
  let wrong = 0;
  // until both threads answered memfs reads themselves (the kernel spreads connections over 3 listeners)
  await waitFor(async () => {
    for (let n = 0; n < 30; n++) {
      const i = n % 10;
      const r = await fresh(`${app.url}/memfs/a/${i}.ts`);
      if (r.status !== 200 || !r.body.equals(body(i))) wrong++;
    }
    const stats = await app.service.threads.stats();
    return stats.length === 2 && stats.every((s) => s.served > 0);
  }, { timeout: 30_000, what: 'both threads serving' });
  t.equal(wrong, 0, 'every read got its bytes');
  // what a thread does not answer (the API) reaches main and comes back
  const about = await fresh(`${app.url}/api`);
  t.equal(about.status, 200);
  t.equal(JSON.parse(about.body.toString()).app, 'datarhei-core');
});

t.test('a file written then read at once through any listener is never a 404 (a thread that misses asks main)', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2) });
  const statuses: number[] = [];
  let wrong = 0;
  for (let i = 0; i < 60; i++) {
    const path = `${app.url}/memfs/live/seg-${i}.ts`;
    t.equal((await fresh(path, { method: 'PUT', body: body(i % 5) })).status, 201);
    const r = await fresh(path);
    statuses.push(r.status);
    if (!r.body.equals(body(i % 5))) wrong++;
    // an overwrite is seen at once too (never the old bytes after the PUT answered)
    await fresh(path, { method: 'PUT', body: body((i % 5) + 1) });
    const again = await fresh(path);
    if (!again.body.equals(body((i % 5) + 1))) wrong++;
  }
  t.same([...new Set(statuses)], [200]);
  t.equal(wrong, 0);
  // deleted: gone on every listener
  await fresh(`${app.url}/memfs/live/seg-0.ts`, { method: 'DELETE' });
  for (let n = 0; n < 15; n++) t.equal((await fresh(`${app.url}/memfs/live/seg-0.ts`)).status, 404);
});

t.test('a JSON file in shared memory is sent as its bytes by main too (API, ranges), not serialized', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2) });
  t.equal((await app.request('PUT', '/api/v3/fs/mem/raw.json', { raw: '{not json', headers: { 'content-type': 'no/such/type;;' } })).status, 201);
  const api = await app.request('GET', '/api/v3/fs/mem/raw.json');
  t.equal(api.text, '{not json');
  t.equal(api.headers.get('content-type'), 'application/json');
  // a range goes to main from every listener
  for (let i = 0; i < 6; i++) {
    const r = await fresh(`${app.url}/memfs/raw.json`, { headers: { range: 'bytes=1-3' } });
    t.equal(r.status, 206);
    t.equal(r.body.toString(), 'not');
  }
});

t.test('a killed thread is replaced; requests keep succeeding', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2) });
  t.equal((await fresh(`${app.url}/memfs/k.ts`, { method: 'PUT', body: body(3) })).status, 201);
  const threads = app.service.threads;
  await threads.kill(0);
  let failed = 0;
  for (let n = 0; n < 20; n++) {
    const r = await fresh(`${app.url}/memfs/k.ts`);
    if (r.status !== 200 || !r.body.equals(body(3))) failed++;
  }
  t.equal(failed, 0, 'the other listeners serve meanwhile');
  await waitFor(() => threads.generations()[0] === 2, { what: 'thread 0 replaced' });
  // the replacement starts from main's snapshot and serves reads itself
  await waitFor(async () => {
    const r = await fresh(`${app.url}/memfs/k.ts`);
    if (r.status !== 200 || !r.body.equals(body(3))) failed++;
    return (await threads.stats())[0]!.served > 0;
  }, { timeout: 30_000, what: 'the new thread 0 serving' });
  t.equal(failed, 0);
});

t.test('a reload keeps the threads serving with the new app', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2) });
  t.equal((await fresh(`${app.url}/memfs/r.ts`, { method: 'PUT', body: body(1) })).status, 201);
  await app.service.reload();
  let wrong = 0;
  await waitFor(async () => {
    for (let n = 0; n < 10; n++) {
      const r = await fresh(`${app.url}/memfs/r.ts`);
      if (r.status !== 200 || !r.body.equals(body(1))) wrong++;
    }
    // created on the first pass, replaced on later ones
    const put = (await fresh(`${app.url}/memfs/r2.ts`, { method: 'PUT', body: body(2) })).status;
    if (put !== 201 && put !== 204) wrong++;
    const r2 = await fresh(`${app.url}/memfs/r2.ts`);
    if (!r2.body.equals(body(2))) wrong++;
    return (await app.service.threads.stats()).every((s) => s.served > 0);
  }, { timeout: 30_000, what: 'threads serving after the reload' });
  t.equal(wrong, 0);
});

t.test('a reload turns threads off and on again (the port stays bound)', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2) });
  t.equal((await fresh(`${app.url}/memfs/o.ts`, { method: 'PUT', body: body(4) })).status, 201);
  const setThreads = async (n: number) => {
    const stored = JSON.parse(await readFile(app.configPath, 'utf8'));
    stored.http = { threads: n };
    await writeFile(app.configPath, JSON.stringify(stored));
    await app.service.reload();
  };
  const port = app.service.port;
  await setThreads(0);
  t.equal(app.service.port, port);
  t.same(await app.service.threads.stats(), []);
  for (let n = 0; n < 5; n++) t.ok((await fresh(`${app.url}/memfs/o.ts`)).body.equals(body(4)));
  await setThreads(1);
  t.equal(app.service.port, port);
  await waitFor(async () => {
    t.ok((await fresh(`${app.url}/memfs/o.ts`)).body.equals(body(4)));
    return (await app.service.threads.stats())[0]!.served > 0;
  }, { timeout: 30_000, what: 'the thread serving the file kept across reloads' });
});
