import t from 'tap';
import { request } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { publish, startRtmpApp } from '../rtmp/helpers.ts';

/*
 * Issue 49.4, "no user sees another domain's logs, metrics or sessions": an IAM user allowed the
 * application log, the metrics query and the sessions lists by its `api` policies gets in each
 * only what is about the processes it may read and the streams it may play (the service's own
 * lines and series are the superusers'), over REST and GraphQL; the superuser sees all.
 */

const JWT = 'iam-domains-jwt-secret-0123456789abcdef';
const API = { auth: { enable: true, username: 'admin', password: 'admin-pw', jwt: { secret: JWT } } };
const proc = (id: string) => ({
  id, reference: id, autostart: true,
  input: [{ id: 'in', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }],
  output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
});
const viewer = {
  name: 'viewer', auth: { api: { userpass: { enable: true, password: 'viewer password' } } },
  policies: [
    { types: ['api'], resource: '/api/v3/log', actions: ['GET'] },
    { types: ['api'], resource: '/api/v3/metrics', actions: ['POST'] },
    { types: ['api'], resource: '/api/v3/session{,/active}', actions: ['GET'] },
    { types: ['api'], resource: '/api/graph/query', actions: ['POST'] },
    { types: ['process'], resource: 'cam-*', actions: ['read'] },
    { types: ['rtmp'], resource: 'live/cam-*', actions: ['PLAY'] },
  ],
};

t.test('the log, metrics and sessions show an IAM user what is about what it may see', async (t) => {
  const app = await startRtmpApp(t, {}, { api: API, iam: { enable: true }, sessions: { enable: true, ip_ignorelist: [] } });
  const login = async (u: string, p: string) => (await request(app.url, 'POST', '/api/login', { body: { username: u, password: p } })).body.access_token as string;
  const admin = await login('admin', 'admin-pw');
  for (const id of ['cam-1', 'other-1']) t.equal((await app.request('POST', '/api/v3/process', { body: proc(id), token: admin })).status, 200);
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: viewer, token: admin })).status, 200);
  const token = await login('viewer', 'viewer password');
  publish(t, `${app.base}/live/cam-1`, { seconds: 90 });
  publish(t, `${app.base}/live/other-1`, { seconds: 90 });
  await waitFor(async () => (await app.request('GET', '/api/v3/session/active?collectors=rtmp', { token: admin })).body.rtmp.length === 2, { timeout: 30_000, what: 'two RTMP sessions' });

  // the log: lines naming a process or a stream, the service's own
  type Line = { process?: string; stream?: string; message?: string };
  const raw = async (tok: string) => (await app.request('GET', '/api/v3/log?format=raw', { token: tok })).body as Line[];
  await waitFor(async () => (await raw(admin)).filter((l) => l.process !== undefined).length >= 2, { timeout: 20_000, what: 'both processes in the log' });
  const all = await raw(admin);
  t.ok(all.some((l) => l.process === 'other-1') && all.some((l) => (l.stream ?? '').includes('other-1')) && all.some((l) => !l.process && !l.stream),
    'the superuser\'s log names other-1 as a process and a stream, and has the service\'s own lines');
  const mine = await raw(token);
  t.ok(mine.some((l) => l.process === 'cam-1') && mine.some((l) => (l.stream ?? '').includes('cam-1')), 'the user\'s log has its process and its stream');
  t.notOk(mine.some((l) => l.process === 'other-1' || (l.stream ?? '').includes('other-1') || (!l.process && !l.stream)), 'and nothing about others, nor the service\'s own');
  const lines = (await app.request('GET', '/api/v3/log', { token })).body as string[];
  t.ok(lines.length === mine.length && !lines.some((l) => l.includes('other-1')), 'the console format the same');

  // metrics: process series by processid, the service's own series
  const query = { metrics: [{ name: 'restream_process' }, { name: 'cpu_idle' }] };
  type Series = { name: string; labels: Record<string, string> | null };
  const series = async (tok: string) => ((await app.request('POST', '/api/v3/metrics', { body: query, token: tok })).body as { metrics: Series[] }).metrics;
  await waitFor(async () => (await series(admin)).some((m) => m.labels?.processid === 'other-1'), { timeout: 20_000, what: 'process series' });
  const adminSeries = await series(admin);
  t.ok(adminSeries.some((m) => m.name === 'cpu_idle'), 'the superuser sees the service\'s own series');
  const userSeries = await series(token);
  t.ok(userSeries.length > 0 && userSeries.every((m) => m.labels?.processid === 'cam-1'), `the user sees its process's series only (${userSeries.length})`);

  // sessions: active lists and the summary
  const active = (await app.request('GET', '/api/v3/session/active?collectors=rtmp', { token })).body.rtmp as { reference: string }[];
  t.same(active.map((s) => s.reference), ['cam-1'], 'the user\'s active sessions');
  const summary = (await app.request('GET', '/api/v3/session?collectors=rtmp', { token })).body.rtmp;
  t.same(summary.active.list.map((s: { reference: string }) => s.reference), ['cam-1']);
  t.equal(summary.active.sessions, 1);
  t.same(summary.summary.remote, {}, 'the peers\' map spans every stream: empty');
  t.notOk(Object.keys(summary.summary.reference).includes('other-1'), 'no other reference in the history');
  t.equal((await app.request('GET', '/api/v3/session/active?collectors=rtmp', { token: admin })).body.rtmp.length, 2, 'the superuser sees both');

  // GraphQL's log and metrics the same
  const g = await app.request('POST', '/api/graph/query', { token, body: { query: '{ log metrics(query: { metrics: [{ name: "restream_process" }, { name: "cpu_idle" }] }) { metrics { name labels } } }' } });
  t.notOk(g.body.errors, g.text);
  t.notOk((g.body.data.log as string[]).some((l) => l.includes('other-1')), 'GraphQL log: nothing about others');
  t.ok((g.body.data.metrics.metrics as Series[]).every((m) => m.labels?.processid === 'cam-1'), 'GraphQL metrics: its process only');
});
