import t, { type Test } from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, startApp, type TestApp } from '../../helpers/app.ts';
import { runCli } from '../../helpers/cli.ts';
import { waitFor } from '../../helpers/wait.ts';
import { api, freshDiskSegment, freshMemSegment, hlsProcess, stateOf } from './restart-helpers.ts';

const readDb = (dbDir: string) => JSON.parse(readFileSync(join(dbDir, 'db.json'), 'utf8'));
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Adds the three processes: HLS into memfs and into disk (both started), one stopped; each with metadata. */
async function addChannels(app: Pick<TestApp, 'request'>): Promise<void> {
  for (const [id, fs, autostart] of [['mem', 'memfs', true], ['disk', 'diskfs', true], ['idle', 'memfs', false]] as const) {
    const r = await app.request('POST', '/api/v3/process', { body: hlsProcess(id, fs, autostart) });
    if (r.status !== 200) throw new Error(`POST ${id}: ${r.status} ${r.text}`);
    await app.request('PUT', `/api/v3/process/${id}/metadata/ui`, { body: { name: `channel ${id}` } });
  }
}

/** The started ones run with fresh segments, the stopped one stays stopped, all keep their metadata. */
async function checkBack(t: Test, app: Pick<TestApp, 'request'>, diskDir: string, since: number): Promise<void> {
  for (const id of ['mem', 'disk']) {
    await waitFor(async () => (await stateOf(app, id)).exec === 'running', { what: `${id} running again`, timeout: 30_000 });
  }
  t.match(await freshMemSegment(app, 'mem', Math.floor(since / 1000)), /^\/mem_\d{4}\.ts$/, 'fresh memfs segments');
  t.match(await freshDiskSegment(diskDir, 'disk', since), /^disk_\d{4}\.ts$/, 'fresh disk segments');
  const idle = await stateOf(app, 'idle');
  t.same([idle.order, idle.exec, idle.runtime_seconds], ['stop', 'finished', 0], 'the stopped one stays stopped; its clock does not tick');
  for (const id of ['mem', 'disk', 'idle']) {
    t.same((await app.request('GET', `/api/v3/process/${id}/metadata`)).body, { ui: { name: `channel ${id}` } }, `${id} keeps its metadata`);
  }
}

t.test('a restart (new OS process) brings back HLS channels into {memfs} and {diskfs}', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'core-restart-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  const diskDir = join(cwd, 'disk');
  await mkdir(diskDir);
  const configPath = join(cwd, 'config.json');
  writeFileSync(configPath, JSON.stringify({
    version: 3, address: '127.0.0.1:0', db: { dir: join(cwd, 'db') }, storage: { disk: { dir: diskDir } },
    plugins: ['auth', 'disk-fs', 'memfs'], update_check: false,
  }));
  const env = cleanEnv({ CORE_LOG_STDOUT: 'false' });
  const first = await runCli(t, ['--config', configPath], env, cwd);
  await addChannels(api(first.url));
  await waitFor(async () => (await stateOf(api(first.url), 'mem')).exec === 'running', { what: 'mem running', timeout: 30_000 });
  first.child.kill('SIGTERM');
  t.equal(await first.exited, 0, 'graceful exit');

  const since = Date.now();
  const second = await runCli(t, ['--config', configPath], env, cwd);
  await checkBack(t, api(second.url), diskDir, since);
  second.child.kill('SIGTERM');
  t.equal(await second.exited, 0);
  t.same(Object.keys(readDb(join(cwd, 'db')).process).sort(), ['disk', 'idle', 'mem']);
});

t.test('a config reload brings them back the same way', async (t) => {
  const app = await startApp(t, { config: { plugins: ['auth', 'disk-fs', 'memfs'] } });
  await addChannels(app);
  await waitFor(async () => (await stateOf(app, 'mem')).exec === 'running', { what: 'mem running', timeout: 30_000 });
  const before = app.service.app;
  // memfs files survive a reload: only segments written after it count
  const since = (nowSeconds() + 1) * 1000;
  t.equal((await app.request('GET', '/api/v3/config/reload')).status, 200);
  await waitFor(() => app.service.app !== before, { what: 'a new app' });
  await checkBack(t, app, join(app.dir, 'disk'), since);
});

t.test('a process whose placeholder plugin is gone is kept, says why, and runs when it is back', async (t) => {
  const app = await startApp(t, { config: { plugins: ['auth', 'disk-fs', 'memfs'] } });
  await app.request('POST', '/api/v3/process', { body: hlsProcess('mem', 'memfs', true) });
  await app.request('PUT', '/api/v3/process/mem/metadata/ui', { body: 1 });
  await app.service.close();
  const config = JSON.parse(readFileSync(app.configPath, 'utf8'));
  writeFileSync(app.configPath, JSON.stringify({ ...config, plugins: ['auth', 'disk-fs'] }));

  const again = await startApp(t, { dir: app.dir });
  const s = await stateOf(again, 'mem');
  t.same([s.order, s.exec, s.runtime_seconds, s.command], ['start', 'failed', 0, null], 'listed, order kept, failed');
  t.match(s.last_logline, /placeholder \{memfs\} is not provided by any loaded plugin/, 'the reason');
  const report = (await again.request('GET', '/api/v3/process/mem/report')).body;
  t.ok(report.log.some(([, l]: [string, string]) => /\{memfs\} is not provided/.test(l)), 'the reason is in its log');
  const db = readDb(join(app.dir, 'db'));
  t.equal(db.process.mem.order, 'start', 'kept in db.json with its order');
  t.equal(db.process.mem.config.output[0].address, '{memfs}/{processid}.m3u8');
  t.same(db.metadata.process.mem, { ui: 1 });

  // plugins are loaded at a start only (issue 26): the operator restarts the service to bring one back
  writeFileSync(app.configPath, JSON.stringify({ ...config, plugins: ['auth', 'disk-fs', 'memfs'] }));
  await again.service.close();
  const back = await startApp(t, { dir: app.dir });
  await waitFor(async () => (await stateOf(back, 'mem')).exec === 'running', { what: 'running with memfs back', timeout: 30_000 });
  t.ok(await freshMemSegment(back, 'mem', 0), 'segments in memfs');
});
