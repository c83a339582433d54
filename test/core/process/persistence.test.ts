import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { addProcess, command, ffmpegPids, nullProcess, state, waitState } from './helpers.ts';

const readDb = (dir: string) => JSON.parse(readFileSync(join(dir, 'db', 'db.json'), 'utf8'));

t.test('every acknowledged change is in db.json; a restart restores and restarts', async (t) => {
  const app = await startApp(t);
  const on = await addProcess(app, nullProcess('on', { autostart: true, reference: 'ref', limits: { memory_mbytes: 300, cpu_usage: 50, waitfor_seconds: 3 } }));
  let db = readDb(app.dir);
  t.equal(db.version, 4);
  t.match(db.process.on, { id: 'on', reference: 'ref', order: 'start' }, 'on disk as soon as POST answered');
  t.match(db.process.on.config, {
    id: 'on', type: 'encoder', ffversion: /^\^\d+\.\d+\.\d+$/, limit_memory_bytes: 300 * 1024 * 1024, limit_cpu_usage: 50, limit_waitfor_seconds: 3,
  });
  t.same(db.process.on.config.input[0].cleanup, [], 'inputs are stored with an empty cleanup list');
  t.equal(db.metadata.process.on, null);

  await addProcess(app, nullProcess('off'));
  await app.request('PUT', '/api/v3/process/on/metadata/ui', { body: { x: 1 } });
  t.same(readDb(app.dir).metadata.process.on, { ui: { x: 1 } });
  await app.request('PUT', '/api/v3/metadata/global', { body: 'g' });
  await waitState(app, 'on', (s) => s.exec === 'running' && s.progress.frame > 0, 'running');
  t.equal(await command(app, 'off', 'start'), 200);
  t.equal(readDb(app.dir).process.off.order, 'start');
  t.equal(await command(app, 'off', 'stop'), 200);
  db = readDb(app.dir);
  t.equal(db.process.off.order, 'stop');
  t.equal(db.process.on.order, 'start');
  const createdAt = (await app.request('GET', '/api/v3/process/on')).body.created_at;

  await app.service.close();
  t.equal(readDb(app.dir).process.on.order, 'start', 'closing keeps the order of running processes');

  const again = await startApp(t, { dir: app.dir });
  const s = await waitState(again, 'on', (x) => x.exec === 'running', 'restarted after the restart');
  t.equal(s.order, 'start');
  const off = await state(again, 'off');
  t.same([off.order, off.exec], ['stop', 'finished'], 'a stopped process stays stopped');
  const p = (await again.request('GET', '/api/v3/process/on')).body;
  t.equal(p.created_at, createdAt);
  t.same(p.metadata, { ui: { x: 1 } });
  t.same(p.config, on, 'the config comes back as it was given');
  t.equal((await again.request('GET', '/api/v3/metadata/global')).body, 'g');

  await again.request('DELETE', '/api/v3/process/on');
  db = readDb(app.dir);
  t.notOk('on' in db.process, 'delete is on disk');
  t.notOk('on' in db.metadata.process, 'with its metadata');
});

t.test('a stored process that is invalid now is listed but cannot start', async (t) => {
  const app = await startApp(t);
  await addProcess(app, nullProcess('good', { autostart: true }));
  await addProcess(app, nullProcess('bad', { autostart: true }));
  await app.service.close();
  const db = readDb(app.dir);
  db.process.bad.config.output[0].address = '/etc/passwd';
  writeFileSync(join(app.dir, 'db', 'db.json'), JSON.stringify(db));

  const again = await startApp(t, { dir: app.dir });
  await waitState(again, 'good', (s) => s.exec === 'running', 'the valid one runs');
  const bad = await state(again, 'bad');
  t.same([bad.order, bad.exec, bad.command, bad.runtime_seconds], ['start', 'failed', null, 0], 'it keeps its order and shows failed');
  t.match(bad.last_logline, /^invalid process definition: .*\/etc\/passwd/, 'with the reason');
  const report = (await again.request('GET', '/api/v3/process/bad/report')).body;
  t.ok(report.log.some(([, line]: [string, string]) => /invalid process definition/.test(line)), 'the reason is in its log');
  t.equal(readDb(app.dir).process.bad.config.output[0].address, '/etc/passwd', 'kept in db.json as stored');
  t.equal((await again.request('GET', '/api/v3/process/bad/config')).body.output[0].address, '/etc/passwd', 'its config is readable');
  const start = await again.request('PUT', '/api/v3/process/bad/command', { body: { command: 'start' } });
  t.same(start.body, { code: 400, message: 'Command failed', details: ['invalid process definition'] });
  const fixed = await again.request('PUT', '/api/v3/process/bad', { body: { output: [{ id: 'out', address: '-', options: ['-f', 'null'] }], input: [{}] } });
  t.equal(fixed.status, 200, 'it can be replaced');
  await waitState(again, 'bad', (s) => s.exec === 'running', 'the replacement keeps order start and runs');
});

t.test('a config reload stops the processes and brings them back with their order', async (t) => {
  const app = await startApp(t);
  const marker = `comment=reload-${process.pid}`;
  await addProcess(app, nullProcess('keep', { autostart: true, output: [{ id: 'out', address: '-', options: ['-metadata', marker, '-f', 'null'] }] }));
  await addProcess(app, nullProcess('idle'));
  await waitState(app, 'keep', (s) => s.exec === 'running' && s.progress.frame > 0, 'running');
  const [pid] = ffmpegPids(marker);
  const before = (await app.request('GET', '/api/v3/process/keep')).body.created_at;
  const oldApp = app.service.app;
  t.equal((await app.request('GET', '/api/v3/config/reload')).status, 200);
  await waitFor(() => app.service.app !== oldApp, { what: 'a new app' });
  const s = await waitState(app, 'keep', (x) => x.exec === 'running' && x.progress.frame > 0, 'running after the reload');
  t.equal(s.order, 'start');
  const pids = ffmpegPids(marker);
  t.ok(pids.length === 1 && pids[0] !== pid, 'one new ffmpeg, the old one is gone');
  t.equal((await app.request('GET', '/api/v3/process/keep')).body.created_at, before);
  t.same((await state(app, 'idle')).order, 'stop');
});

t.test('db.json is written as loaded once the start is over (a process stored under another key moves to its id)', async (t) => {
  const app = await startApp(t);
  await addProcess(app, nullProcess('keyed'));
  await app.service.close();
  const path = join(app.dir, 'db', 'db.json');
  const db = readDb(app.dir);
  db.process['another-key'] = db.process.keyed;
  delete db.process.keyed;
  writeFileSync(path, JSON.stringify(db));
  const again = await startApp(t, { dir: app.dir });
  t.equal((await again.request('GET', '/api/v3/process/keyed')).status, 200, 'restored under its id');
  await waitFor(() => readDb(app.dir).process.keyed !== undefined, { what: 'db.json rewritten' });
  t.notOk('another-key' in readDb(app.dir).process, 'the old key is gone');
});
