import { fileURLToPath } from 'node:url';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { addProcess, command, ffmpegPids, nullProcess, state, waitState } from './helpers.ts';

/** A process whose child carries `marker` in its command line. */
const marked = (id: string, marker: string, extra: Record<string, unknown> = {}) =>
  nullProcess(id, { output: [{ id: 'out', address: '-', options: ['-metadata', `comment=${marker}`, '-f', 'null'] }], ...extra });

const FIXTURE = fileURLToPath(new URL('./fixtures/replica-plugin.ts', import.meta.url));

t.test('replication seam: writes go through it first, and a process runs only where it says', async (t) => {
  const app = await startApp(t, { config: { plugins: ['*', FIXTURE] } });
  const seen = async () => (await app.request('GET', '/test/replica')).body;
  const runs = (id: string, on: boolean) => app.request('PUT', `/test/replica/runs/${id}`, { body: { runs: on } });
  const marker = `rep-${process.pid}-a`;

  await addProcess(app, marked('a', marker, { autostart: true, reference: marker }));
  let s = await seen();
  t.equal(s.writes.length, 1);
  t.match(s.writes[0], { kind: 'put', created: true, record: { id: 'a', order: 'start', reference: marker, metadata: null } }, 'the add was shared');
  t.equal((await state(app, 'a')).exec, 'finished', 'order start, but not run here: another node owns it');
  t.same(s.starts, []);

  await runs('a', true);
  await waitState(app, 'a', (x) => x.exec === 'running', 'runs once owned');
  // `running` comes with the spawn; the confinement wrapper becomes ffmpeg a moment later (exec)
  await waitFor(() => ffmpegPids(marker).length === 1, { timeout: 10_000, what: 'its ffmpeg' });
  t.equal(ffmpegPids(marker).length, 1, 'its child runs');
  await runs('a', false);
  const stopped = await waitState(app, 'a', (x) => x.exec !== 'running' && x.exec !== 'starting', 'stops when no longer owned');
  t.equal(stopped.order, 'start', 'the order is kept: it runs elsewhere');
  t.same(ffmpegPids(marker), [], 'no child left');

  t.equal(await command(app, 'a', 'stop'), 200);
  s = await seen();
  t.match(s.writes.at(-1), { kind: 'put', record: { id: 'a', order: 'stop' } }, 'an order change is shared');
  t.notOk(s.writes.at(-1).created, 'as a change, not an add');
  t.equal((await app.request('PUT', '/api/v3/process/a/metadata/k', { body: { v: 1 } })).status, 200);
  t.match((await seen()).writes.at(-1), { kind: 'put', record: { id: 'a', metadata: { k: { v: 1 } } } }, 'metadata is shared');
  t.equal((await app.request('PUT', '/api/v3/process/a', { body: { id: 'a2' } })).status, 200);
  t.match((await seen()).writes.at(-1), { kind: 'put', previousId: 'a', record: { id: 'a2', metadata: { k: { v: 1 } } } }, 'a rename names the id before');

  // a refusal of the shared store changes nothing here
  await app.request('PUT', '/test/replica/refuse', { body: { refuse: true } });
  const n = (await seen()).writes.length;
  const refused = await app.request('POST', '/api/v3/process', { body: nullProcess('b') });
  t.equal(refused.status, 409);
  t.equal(refused.body.code, 409);
  t.equal((await app.request('GET', '/api/v3/process/b')).status, 404, 'not added');
  t.equal(await command(app, 'a2', 'start'), 409, 'an order change refused');
  t.equal((await state(app, 'a2')).order, 'stop', 'the order stayed');
  t.equal((await app.request('DELETE', '/api/v3/process/a2')).status, 409, 'a delete refused');
  t.equal((await app.request('GET', '/api/v3/process/a2')).status, 200, 'still there');
  await app.request('PUT', '/test/replica/refuse', { body: { refuse: false } });
  t.equal((await seen()).writes.length, n, 'nothing was written');
  t.equal((await app.request('DELETE', '/api/v3/process/a2')).status, 200);
  t.match((await seen()).writes.at(-1), { kind: 'delete', id: 'a2' });
});

t.test('replication seam: changes from another node are applied without writing back', async (t) => {
  const app = await startApp(t, { config: { plugins: ['*', FIXTURE] } });
  const seen = async () => (await app.request('GET', '/test/replica')).body;
  const apply = async (r: unknown) => t.equal((await app.request('POST', '/test/replica/apply', { body: r })).status, 200);
  const marker = `rep-${process.pid}-r`;

  // a record as another node's engine stores it: made here, then deleted, then applied back
  await addProcess(app, marked('r', marker, { reference: marker }));
  const [record] = (await seen()).records;
  t.equal(record.id, 'r');
  t.equal((await app.request('DELETE', '/api/v3/process/r')).status, 200);
  const written = (await seen()).writes.length;

  await app.request('PUT', '/test/replica/runs/r', { body: { runs: true } });
  await apply({ ...record, order: 'start', metadata: { from: 'b' } });
  const running = await waitState(app, 'r', (x) => x.exec === 'running', 'an applied process with order start runs where owned');
  await waitFor(() => ffmpegPids(marker).length === 1 || undefined, { what: 'its child' });
  t.same((await app.request('GET', '/api/v3/process/r/metadata/from')).body, 'b', 'with its metadata');
  t.same((await seen()).records.find((x: { id: string }) => x.id === 'r').config, record.config, 'stored as it came');

  // the echo of what is here already: no restart
  const echo = (await seen()).records.find((x: { id: string }) => x.id === 'r');
  await apply(echo);
  await apply(echo);
  t.equal((await seen()).starts.filter((id: string) => id === 'r').length, 1, 'an unchanged record restarts nothing');
  t.equal(ffmpegPids(marker).length, 1);
  t.ok((await state(app, 'r')).runtime_seconds >= running.runtime_seconds);

  // order and config changes follow
  await apply({ ...echo, order: 'stop' });
  await waitState(app, 'r', (x) => x.order === 'stop' && x.exec !== 'running', 'an order stop from another node stops it');
  await apply({ ...echo, order: 'start', config: { ...echo.config, reference: `${marker}-2` } });
  await waitState(app, 'r', (x) => x.exec === 'running', 'a changed config replaces and runs it');
  t.equal((await app.request('GET', '/api/v3/process/r/config')).body.reference, `${marker}-2`);
  await waitFor(() => ffmpegPids(marker).length === 1 || undefined, { what: 'one child (the old one gone)' });
  // its maker (who made it on the other node: asked again at each start) travels with it
  const changed = (await seen()).records.find((x: { id: string }) => x.id === 'r');
  t.equal(changed.maker, undefined, 'no maker without an access plugin');
  await apply({ ...changed, maker: 'iam:alice' });
  await waitFor(async () => (await seen()).records.find((x: { id: string }) => x.id === 'r').maker === 'iam:alice' || undefined, { what: 'a new maker kept (not an unchanged echo)' });
  // and since when, when a plugin made it for its maker earlier than its last write
  await apply({ ...changed, maker: 'iam:alice', maker_since: changed.updated_at - 100 });
  await waitFor(async () => (await seen()).records.find((x: { id: string }) => x.id === 'r').maker_since === changed.updated_at - 100 || undefined,
    { what: 'a new maker_since kept (not an unchanged echo)' });
  const db = JSON.parse(await readFile(join(app.dir, 'db', 'db.json'), 'utf8'));
  t.equal(db.process.r.maker_since, changed.updated_at - 100, 'stored in db.json');
  await waitState(app, 'r', (x) => x.exec === 'running', 'no access plugin: nothing asks its maker');

  t.equal((await app.request('DELETE', '/test/replica/r')).status, 200);
  t.equal((await app.request('GET', '/api/v3/process/r')).status, 404, 'a drop deletes it here');
  await waitFor(() => ffmpegPids(marker).length === 0 || undefined, { what: 'its child stopped' });
  t.equal((await seen()).writes.length, written, 'nothing applied from elsewhere was written back');
});
