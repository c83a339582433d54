import { mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { addProcess, ffmpegPids, nullProcess, state, waitState } from './helpers.ts';

// a size no other test uses: the running child is found by its command line
const MARKED_IN = { id: 'in', address: 'testsrc2=size=168x126:rate=10', options: ['-re', '-f', 'lavfi'] };

const ids = async (app: Awaited<ReturnType<typeof startApp>>) =>
  ((await app.request('GET', '/api/v3/process')).body as Array<{ id: string }>).map((p) => p.id).sort();

t.test('a change whose db.json write fails answers an error and leaves every process as it was', async (t) => {
  const app = await startApp(t);
  await addProcess(app, nullProcess('run', { input: [MARKED_IN], autostart: true, reference: 'r1' }));
  await addProcess(app, nullProcess('idle', { reference: 'r2' }));
  t.equal((await app.request('PUT', '/api/v3/process/run/metadata/k', { body: 'v' })).status, 200);
  await waitState(app, 'run', (s) => s.exec === 'running', 'running');
  const pids = ffmpegPids('168x126');
  t.equal(pids.length, 1, 'one child');
  const dbPath = join(app.dir, 'db', 'db.json');
  const saved = await readFile(dbPath, 'utf8');

  // db.json becomes a folder: the temp file is written, the rename onto it fails (nothing else in db/ breaks)
  await rename(dbPath, `${dbPath}.saved`);
  await mkdir(join(dbPath, 'x'), { recursive: true });
  t.teardown(() => rm(dbPath, { recursive: true, force: true }));

  const failed = async (what: string, r: { status: number; body: any }) => {
    t.ok(r.status >= 400, `${what}: ${r.status}`);
    t.match(r.body, { code: r.status, message: String, details: Array }, `${what}: Error body`);
  };
  const runBody = nullProcess('run', { input: [MARKED_IN], autostart: true, reference: 'changed' });
  await failed('PUT same id', await app.request('PUT', '/api/v3/process/run', { body: runBody }));
  await failed('PUT new id', await app.request('PUT', '/api/v3/process/run', { body: { ...runBody, id: 'moved' } }));
  await failed('DELETE', await app.request('DELETE', '/api/v3/process/idle'));
  await failed('POST', await app.request('POST', '/api/v3/process', { body: nullProcess('new') }));
  const cmd = (id: string, c: string) => app.request('PUT', `/api/v3/process/${id}/command`, { body: { command: c } });
  await failed('start', await cmd('idle', 'start'));
  await failed('stop', await cmd('run', 'stop'));
  await failed('process metadata', await app.request('PUT', '/api/v3/process/run/metadata/k', { body: 'lost' }));
  await failed('global metadata', await app.request('PUT', '/api/v3/metadata/g', { body: 1 }));

  t.same(await ids(app), ['idle', 'run'], 'the list is unchanged');
  t.equal((await app.request('GET', '/api/v3/process/run')).body.reference, 'r1');
  t.equal((await app.request('GET', '/api/v3/process/moved')).status, 404);
  t.same((await app.request('GET', '/api/v3/process/run/metadata/k')).body, 'v');
  t.equal((await app.request('GET', '/api/v3/metadata/g')).status, 404);
  const idle = await state(app, 'idle');
  t.same([idle.order, idle.exec], ['stop', 'finished'], 'the refused start did not start it');
  const run = await state(app, 'run');
  t.same([run.order, run.exec], ['start', 'running'], 'the refused stop and replace did not stop it');
  t.same(ffmpegPids('168x126'), pids, 'the same child runs');

  // writes work again: the next change writes exactly the state before the failures plus itself
  await rm(dbPath, { recursive: true });
  t.equal((await app.request('PUT', '/api/v3/metadata/ok', { body: 1 })).status, 200);
  const db = JSON.parse(await readFile(dbPath, 'utf8'));
  const before = JSON.parse(saved);
  before.metadata.system.ok = 1;
  t.same(db, before, 'db.json = last acknowledged state + the new change');
});
