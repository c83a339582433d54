import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv } from '../../../helpers/app.ts';
import { runCli } from '../../../helpers/cli.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { api, stateOf } from '../restart-helpers.ts';
import { ffmpegPids } from '../helpers.ts';
import { hlsProcess } from './helpers.ts';

/*
 * The on-demand config survives a restart (a new OS process after SIGTERM): the process comes
 * back waiting, not running, with its field in db.json and the API, and a viewer starts it.
 */

t.test('an on-demand process still waits for demand after a restart', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'core-ondemand-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  await mkdir(join(cwd, 'disk'));
  const configPath = join(cwd, 'config.json');
  writeFileSync(configPath, JSON.stringify({
    version: 3, address: '127.0.0.1:0', db: { dir: join(cwd, 'db') }, storage: { disk: { dir: join(cwd, 'disk') } },
    plugins: ['auth', 'disk-fs', 'memfs'], update_check: false, encoder: { ondemand: { idle_seconds: 4 } },
  }));
  const env = cleanEnv({ CORE_LOG_STDOUT: 'false' });
  const first = await runCli(t, ['--config', configPath], env, cwd);
  const a = api(first.url);
  const add = await a.request('POST', '/api/v3/process', { body: hlsProcess('cam9', 'cam9', { ondemand: { enable: true } }) });
  t.equal(add.status, 200);
  t.same(add.body.ondemand, { enable: true, idle_seconds: 0 }, 'idle_seconds 0: the engine default');
  const w = await waitFor(async () => { const s = await stateOf(a, 'cam9'); return s.ondemand?.waiting ? s : undefined; }, { what: 'waiting' });
  t.equal(w.ondemand.idle_seconds, 4, 'the default comes from encoder.ondemand.idle_seconds');
  first.child.kill('SIGTERM');
  t.equal(await first.exited, 0, 'graceful exit');
  const stored = JSON.parse(readFileSync(join(cwd, 'db', 'db.json'), 'utf8')).process.cam9;
  t.same(stored.config.ondemand, { enable: true, idle_seconds: 0 }, 'db.json keeps the field');
  t.equal(stored.order, 'start');

  const second = await runCli(t, ['--config', configPath], env, cwd);
  const b = api(second.url);
  const s = await waitFor(async () => { const x = await stateOf(b, 'cam9'); return x.ondemand?.waiting ? x : undefined; }, { what: 'waiting after the restart' });
  t.equal(s.exec, 'finished', 'it does not run at boot');
  t.same(ffmpegPids('cam9.m3u8'), [], 'no ffmpeg at boot');
  t.same((await b.request('GET', '/api/v3/process/cam9/config')).body.ondemand, { enable: true, idle_seconds: 0 });
  // a viewer starts it
  await waitFor(async () => { await fetch(`${second.url}/memfs/cam9.m3u8`); return (await stateOf(b, 'cam9')).exec === 'running'; }, { what: 'started by a viewer', interval: 500 });
  t.pass('a viewer starts it after the restart');
  second.child.kill('SIGTERM');
  t.equal(await second.exited, 0);
});
