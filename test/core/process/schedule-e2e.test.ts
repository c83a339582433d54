import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanEnv, startApp, type Requester } from '../../helpers/app.ts';
import { runCli } from '../../helpers/cli.ts';
import { waitFor } from '../../helpers/wait.ts';
import { gqlData } from '../../plugins/graphql/helpers.ts';
import { nullProcess } from './helpers.ts';
import { api, stateOf } from './restart-helpers.ts';

/*
 * Schedules on the real clock, end to end (real server on port 0, real ffmpeg): a one-off RFC
 * 3339 start and its duration stop within 1 s, 400s naming the field, the weekly sample, and a
 * schedule that survives a restart of the service as a new OS process.
 */

/** An RFC 3339 time `ms` from now, rounded up to a whole second. */
const inMs = (ms: number) => new Date(Math.ceil((Date.now() + ms) / 1000) * 1000).toISOString().replace('.000Z', 'Z');

/** Real milliseconds between `at` (an RFC 3339 time) and the moment the state satisfies `pred`. */
async function lateBy(app: Requester, id: string, at: string, pred: (s: any) => boolean, what: string): Promise<number> {
  await waitFor(async () => pred(await stateOf(app, id)), { what, interval: 20, timeout: 20_000 });
  return Date.now() - Date.parse(at);
}

t.test('a one-off RFC 3339 start runs once: starts within 1 s of its time, stops at its duration', async (t) => {
  const app = await startApp(t);
  const at = inMs(2500);
  const r = await app.request('POST', '/api/v3/process', {
    body: nullProcess('once', { autostart: true, reconnect: true, scheduler: at, runtime_duration_seconds: 2 }),
  });
  t.equal(r.status, 200, r.text);
  const waiting = await stateOf(app, 'once');
  t.same([waiting.order, waiting.exec, waiting.next_run], ['start', 'finished', at], 'waits with its time shown');
  const late = await lateBy(app, 'once', at, (s) => s.exec === 'running', 'start');
  t.ok(late >= 0 && late < 1000, `started ${late} ms after its time`);
  const end = new Date(Date.parse(at) + 2000).toISOString();
  const lateStop = await lateBy(app, 'once', end, (s) => s.exec !== 'running', 'stop');
  t.ok(lateStop >= 0 && lateStop < 1000, `stopped ${lateStop} ms after its duration`);
  await waitFor(async () => (await stateOf(app, 'once')).exec !== 'finishing', { what: 'ended' });
  await new Promise((res) => setTimeout(res, 1500));
  const after = await stateOf(app, 'once');
  t.same([after.order, after.next_run], ['start', undefined], 'order kept, no next run');
  t.not(after.exec, 'running', 'no reconnect after a duration stop');
});

t.test('invalid schedules get 400 naming the field', async (t) => {
  const app = await startApp(t);
  for (const scheduler of ['every monday', '61 * * * *', '* * * * * *', '2030-13-01T00:00:00Z', '2030-01-01T00:00:00']) {
    const r = await app.request('POST', '/api/v3/process', { body: nullProcess('bad', { scheduler }) });
    t.equal(r.status, 400, scheduler);
    t.match(JSON.stringify(r.body), /scheduler/, `${scheduler}: the error names the field`);
  }
  const neg = await app.request('POST', '/api/v3/process', { body: nullProcess('bad', { runtime_duration_seconds: -1 }) });
  t.equal(neg.status, 400);
  t.match(JSON.stringify(neg.body), /runtime_duration_seconds/);
  t.equal((await app.request('POST', '/api/v3/process', { body: nullProcess('ok', { scheduler: '*/5 * * * *' }) })).status, 200);
  const put = await app.request('PUT', '/api/v3/process/ok', { body: { scheduler: 'nope' } });
  t.equal(put.status, 400);
  t.match(JSON.stringify(put.body), /scheduler/);
  t.equal((await app.request('GET', '/api/v3/process/ok/config')).body.scheduler, '*/5 * * * *', 'unchanged');
});

t.test('the weekly restream sample is accepted and shows its next run in REST and GraphQL', async (t) => {
  const app = await startApp(t, { config: { plugins: ['graphql'] } });
  const file = fileURLToPath(new URL('../../../sample-config/processes/weekly-restream.json', import.meta.url));
  const sample = JSON.parse(readFileSync(file, 'utf8'));
  t.equal((await app.request('POST', '/api/v3/process', { body: sample })).status, 200);
  const s = await stateOf(app, sample.id);
  t.match(s.next_run, /^\d{4}-\d{2}-\d{2}T18:00:00Z$/);
  t.equal(new Date(s.next_run).getUTCDay(), 0, 'a Sunday');
  const data = await gqlData(app, `{ process(id: "${sample.id}") { state { next_run } } }`);
  t.equal(data.process.state.next_run, s.next_run);
  const doc = JSON.stringify((await app.request('GET', '/api/swagger/json')).body);
  for (const field of ['scheduler', 'runtime_duration_seconds', 'next_run']) t.ok(doc.includes(`"${field}"`), `swagger lists ${field}`);
  const types = await gqlData(app, '{ c: __type(name: "ProcessConfig") { fields { name } } s: __type(name: "ProcessState") { fields { name } } }');
  const names = [...types.c.fields, ...types.s.fields].map((f: { name: string }) => f.name);
  t.ok(['scheduler', 'runtime_duration_seconds', 'next_run'].every((f) => names.includes(f)), 'the GraphQL schema lists them');
});

t.test('a schedule survives a restart (new OS process); a start due while it was down runs at once', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'core-sched-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  await mkdir(join(cwd, 'disk'));
  const configPath = join(cwd, 'config.json');
  writeFileSync(configPath, JSON.stringify({
    version: 3, address: '127.0.0.1:0', db: { dir: join(cwd, 'db') }, storage: { disk: { dir: join(cwd, 'disk') } },
    plugins: [], update_check: false,
  }));
  const env = cleanEnv({ CORE_LOG_STDOUT: 'false' });
  const first = await runCli(t, ['--config', configPath], env, cwd);
  const at = inMs(3000);
  for (const body of [
    nullProcess('due', { autostart: true, scheduler: at, runtime_duration_seconds: 60 }),
    nullProcess('weekly', { autostart: true, scheduler: '0 10 * * 1', runtime_duration_seconds: 60 }),
  ]) t.equal((await api(first.url).request('POST', '/api/v3/process', { body })).status, 200);
  const weekly = (await stateOf(api(first.url), 'weekly')).next_run;
  first.child.kill('SIGTERM');
  t.equal(await first.exited, 0, 'graceful exit');

  // down while the start falls due
  await waitFor(() => Date.now() > Date.parse(at) + 500, { what: 'the start time to pass', interval: 100 });
  const second = await runCli(t, ['--config', configPath], env, cwd);
  const app = api(second.url);
  await waitFor(async () => (await stateOf(app, 'due')).exec === 'running', { what: 'due running', timeout: 10_000 });
  t.equal((await stateOf(app, 'due')).next_run, undefined, 'a one-off has no next run');
  const w = await stateOf(app, 'weekly');
  t.same([w.order, w.exec, w.next_run], ['start', 'finished', weekly], 'the weekly one waits for the same time');
  second.child.kill('SIGTERM');
  t.equal(await second.exited, 0);
});
