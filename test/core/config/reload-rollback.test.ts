import t from 'tap';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request, startApp, cleanEnv } from '../../helpers/app.ts';
import { runCli, startCli } from '../../helpers/cli.ts';
import { waitFor } from '../../helpers/wait.ts';

/*
 * Issue 27.4: a reload that fails anyway keeps the service answering with the config it ran,
 * says why, and leaves a config file that boots.
 */

const logOf = async (url: string): Promise<string> => JSON.stringify((await request(url, 'GET', '/api/v3/log?format=raw')).body);

t.test('a reload whose apply fails: the previous config runs again, the file boots a new process', async (t) => {
  const cli = await startCli(t, { name: 'booted', plugins: [] });
  const configPath = join(cli.dir, 'config.json');
  const booted = await readFile(configPath, 'utf8');
  // a db.dir that is fine when stored, whose db.json turns out unreadable when the reload applies it
  const db2 = join(cli.dir, 'db2');
  await mkdir(db2);
  // db.dir is the operator's (issue 26): changed in the file, as an operator does
  await writeFile(configPath, JSON.stringify({ ...JSON.parse(booted), name: 'next', db: { dir: db2 } }));
  await writeFile(join(db2, 'db.json'), JSON.stringify({ version: 99 }));

  const reload = await request(cli.url, 'GET', '/api/v3/config/reload');
  t.equal(reload.status, 200, 'the stored config passed the checks');
  await waitFor(async () => (await logOf(cli.url)).includes('the previous config runs again'), { timeout: 60_000, what: 'the rollback' });
  t.equal(cli.child.exitCode, null, 'the service is still running');
  const about = await request(cli.url, 'GET', '/api');
  t.equal(about.status, 200, 'the API answers');
  t.equal(about.body.name, 'booted', 'with the config it ran before');
  t.match(await logOf(cli.url), /unsupported version/, 'the log says why');
  t.equal(await readFile(configPath, 'utf8'), booted, 'the file is the one the service booted from again');
  t.match(JSON.parse(await readFile(`${configPath}.rejected`, 'utf8')), { name: 'next' }, 'the refused config is kept aside');

  const gone = new Promise((r) => cli.child.once('exit', r));
  cli.child.kill('SIGTERM');
  await gone;
  const again = await runCli(t, ['--config', configPath], cleanEnv(), cli.dir);
  const fresh = await request(again.url, 'GET', '/api');
  t.equal(fresh.body.name, 'booted', 'a new process boots on the file');
  again.child.kill('SIGTERM');
  await again.exited;
});

t.test('a stored config that would not boot: the reload answers 400 naming the key and puts the running one back', async (t) => {
  const app = await startApp(t, { config: { name: 'running', plugins: [] } });
  const booted = await readFile(app.configPath, 'utf8');
  const edited = JSON.parse(booted);
  edited.name = 'edited';
  edited.api.max_body_size_mbytes = 0;
  await writeFile(app.configPath, JSON.stringify(edited));
  const r = await app.request('GET', '/api/v3/config/reload');
  t.equal(r.status, 400);
  t.equal(r.body.message, 'Failed to activate config');
  t.match(r.body.details, [/^api\.max_body_size_mbytes: /]);
  t.equal(await readFile(app.configPath, 'utf8'), booted, 'the file boots again');
  t.equal((await app.request('GET', '/api')).body.name, 'running', 'the service runs on');
});
