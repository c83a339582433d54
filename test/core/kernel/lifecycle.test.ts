import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startApp } from '../../helpers/app.ts';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}.ts`, import.meta.url));

t.test('lifecycle phases: ready after every setup, listen with the port, shutdown before close, close once in reverse', async (t) => {
  // a fresh folder per run: the events file must start empty
  const events = join(t.testdir(), 'events.log');
  const plugins = [
    { module: fixture('lifecycle-plugin'), config: { events } },
    { module: fixture('lifecycle-plugin-b'), config: { events } },
  ];
  const app = await startApp(t, { config: { plugins } });
  const port = app.service.port;
  const lines = () => readFileSync(events, 'utf8').trim().split('\n');
  t.same(lines(), [
    'setup:lifecycle-a', 'setup:lifecycle-b',
    'ready(lifecyclea+lifecycleb):lifecycle-a', 'ready(lifecyclea+lifecycleb):lifecycle-b',
    `listen(${port}):lifecycle-a`, `listen(${port}):lifecycle-b`,
  ]);

  // state: concurrent saves are coalesced, every one lands, written atomically (no temp file left)
  const hits = await Promise.all(Array.from({ length: 20 }, () => app.request('POST', '/api/v3/lifecycle-a/hit')));
  t.ok(hits.every((r) => r.status === 200));
  const dir = join(app.dir, 'db', 'plugins', 'lifecycle-a');
  t.same(JSON.parse(readFileSync(join(dir, 'counter.json'), 'utf8')), { boots: 1, hits: 20 }, 'every save is on disk');
  t.same(readdirSync(dir), ['counter.json'], 'no temp file left behind');
  t.same(JSON.parse(readFileSync(join(app.dir, 'db', 'lifeb.json'), 'utf8')), { root: 'lifeb' }, 'a root document lives in db.dir');

  await Promise.all([app.service.close(), app.service.close()]);
  await app.service.close();
  t.same(lines().slice(6), [
    'shutdown:lifecycle-b', 'shutdown:lifecycle-a', 'close:lifecycle-b', 'close:lifecycle-a',
  ], 'every shutdown before any close, newest first, once');

  const again = await startApp(t, { dir: app.dir });
  t.same(JSON.parse(readFileSync(join(dir, 'counter.json'), 'utf8')), { boots: 2, hits: 20 }, 'the document survives a restart');
  t.same((await again.request('POST', '/api/v3/lifecycle-a/hit')).body, { hits: 21 });
});

t.test('a plugin cannot claim another plugin\'s root document', async (t) => {
  const events = join(t.testdir(), 'events.log');
  const err = await startApp(t, { config: { plugins: [{ module: fixture('claims-db-plugin'), config: { events } }] } })
    .then(() => 'started', (e: Error) => e.message);
  t.match(err, /Plugin 'claims-db' startup failed: state document 'db' is already claimed by process/);
});

t.test('the process engine is always mounted, whatever plugins says', async (t) => {
  const app = await startApp(t, { config: { plugins: ['process'] } });
  t.same(app.service.app.kernel.plugins, ['process']);
  t.equal((await app.request('GET', '/api/v3/process')).status, 200);
});
