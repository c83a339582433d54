import t from 'tap';
import { fileURLToPath } from 'node:url';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { gql, gqlData } from './helpers.ts';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}.ts`, import.meta.url));

t.test('with auth on, both routes want the API credential (401 without)', async (t) => {
  const app = await startApp(t, { config: { api: { auth: { enable: true, username: 'admin', password: 'secret-pass' } } } });
  const anon = await gql(app, '{ ping }');
  t.equal(anon.status, 401);
  t.equal(anon.body.code, 401, 'the Error body');
  t.equal((await app.request('GET', '/api/graph')).status, 401);
  const token = (await app.request('POST', '/api/login', { body: { username: 'admin', password: 'secret-pass' } })).body.access_token as string;
  t.same((await gql(app, '{ ping }', undefined, token)).body, { data: { ping: 'pong' } });
  t.equal((await app.request('GET', '/api/graph', { token })).status, 200);
});

t.test('api.read_only leaves queries alone; the IP lists apply', async (t) => {
  const app = await startApp(t, { config: { api: { read_only: true } } });
  t.same((await gql(app, 'mutation { ping }')).body, { data: { ping: 'pong' } });
  const blocked = await startApp(t, { config: { api: { access: { http: { block: ['127.0.0.1/32'] } } } } });
  t.equal((await gql(blocked, '{ ping }')).status, 403);
});

const METRICS_Q = 'query ($q: MetricsInput!) { metrics(query: $q) { timerange_seconds interval_seconds metrics { name labels values } } }';

t.test('metrics(query) answers what POST /api/v3/metrics answers', async (t) => {
  const app = await startApp(t);
  const rest = (await app.request('POST', '/api/v3/metrics', { body: { metrics: [{ name: 'cpu_ncpu' }, { name: 'mem_total' }] } })).body;
  const { metrics } = await gqlData(app, METRICS_Q, { q: { metrics: [{ name: 'cpu_ncpu' }, { name: 'mem_total', labels: { ignored: 5 } }] } });
  t.equal(metrics.timerange_seconds, rest.timerange_sec);
  t.equal(metrics.interval_seconds, rest.interval_sec);
  t.equal(metrics.metrics.length, rest.metrics.length);
  t.ok(rest.metrics.length >= 1, 'some values');
  rest.metrics.forEach((m: any, i: number) => {
    const g = metrics.metrics[i];
    t.same([g.name, g.labels, g.values[0][1]], [m.name, m.labels, m.values[0][1]], m.name);
    t.ok(Math.abs(g.values[0][0] - m.values[0][0]) <= 1, 'timestamps within a second');
  });
});

t.test('without the metrics plugin, metrics is the empty answer', async (t) => {
  const app = await startApp(t, { config: { plugins: ['graphql'] } });
  const { metrics } = await gqlData(app, METRICS_Q, { q: { metrics: [{ name: 'cpu_ncpu' }] } });
  t.same(metrics, { timerange_seconds: 0, interval_seconds: 0, metrics: [] });
});

t.test('playoutStatus without the playout plugin is a clean error', async (t) => {
  const app = await startApp(t, { config: { plugins: ['graphql'] } });
  const r = await gql(app, '{ playoutStatus(id: "p", input: "in") { id url } }');
  t.equal(r.status, 200);
  t.same(r.body.data, { playoutStatus: null });
  t.match(r.body.errors, [{ message: 'playout is not loaded', path: ['playoutStatus'], extensions: { error: 'GRAPHQL_PLAYOUT_NOT_LOADED' } }]);
  t.same((await gqlData(app, '{ ping }')), { ping: 'pong' }, 'and the service goes on');
});

t.test('a vendor plugin adds fields, with a batch loader', async (t) => {
  const app = await startApp(t, { config: { plugins: ['graphql', { module: fixture('vendor-hello') }] } });
  t.same(await gqlData(app, '{ vendorHello }'), { vendorHello: 'hello from a vendor' });
  const { vendorItems } = await gqlData(app, '{ vendorItems { n double } }');
  t.same(vendorItems, [{ n: 1, double: 2 }, { n: 2, double: 4 }, { n: 3, double: 6 }]);
  t.same((await gqlData(app, '{ vendorBatches }')).vendorBatches, [3], 'one loader call for the three items');
});

t.test('a vendor resolver sees who asked', async (t) => {
  const app = await startApp(t, {
    config: { plugins: ['auth', 'graphql', { module: fixture('vendor-hello') }], api: { auth: { enable: true, username: 'admin', password: 'secret-pass' } } },
  });
  const token = (await app.request('POST', '/api/login', { body: { username: 'admin', password: 'secret-pass' } })).body.access_token as string;
  t.same((await gql(app, '{ vendorWho }', undefined, token)).body, { data: { vendorWho: 'admin' } });
});

t.test('a contribution that does not compose stops the boot, naming it', async (t) => {
  await t.rejects(startApp(t, { config: { plugins: ['graphql', { module: fixture('vendor-clash') }] } }),
    /graphql.*vendor-clash.*do not compose.*Process/s);
});

t.test('playoutStatus reads the playout service: enum states, its errors keep their status', async (t) => {
  const { STATUS } = await import('./fixtures/fake-playout.ts');
  const app = await startApp(t, { config: { plugins: ['graphql', { module: fixture('fake-playout') }] } });
  const fields = 'id url stream queue aqueue dup drop enc looping duplicating gop debug input { state packet time size_kb } output { state packet time size_kb } swap { url status lasturl lasterror }';
  const { playoutStatus } = await gqlData(app, `{ playoutStatus(id: "p", input: "in") { ${fields} } }`);
  t.same(playoutStatus, {
    ...STATUS, input: { ...STATUS.input, state: 'RUNNING' }, output: { ...STATUS.output, state: 'IDLE' },
  });
  const unknown = await gql(app, '{ playoutStatus(id: "p", input: "nope") { id } }');
  t.same(unknown.body.data, { playoutStatus: null });
  t.match(unknown.body.errors, [{ message: 'Unknown process or input', extensions: { code: 404, error: 'PLAYOUT_UNKNOWN', details: ['p/nope'] } }]);
});

t.test('answers from fields that do not record their reads are computed every time', async (t) => {
  const app = await startApp(t, { config: { plugins: ['graphql', { module: fixture('vendor-hello') }] } });
  for (let i = 0; i < 3; i++) await gqlData(app, '{ vendorItems { n double } }');
  t.same((await gqlData(app, '{ vendorBatches }')).vendorBatches, [3, 3, 3], 'the loader ran for each query');
  const first = (await gqlData(app, '{ about { uptime_seconds } }')).about.uptime_seconds;
  await waitFor(async () => (await gqlData(app, '{ about { uptime_seconds } }')).about.uptime_seconds > first, { what: 'uptime to move' });
  t.pass('about is fresh');
});
