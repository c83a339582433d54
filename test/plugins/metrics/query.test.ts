import t from 'tap';
import { startApp, type TestApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { addProcess, command, nullProcess, waitState } from '../../core/process/helpers.ts';

type Series = { name: string; labels: Record<string, string> | null; values: [number, number][] };

async function query(app: TestApp, body: unknown): Promise<{ timerange_sec: number; interval_sec: number; metrics: Series[] }> {
  const r = await app.request('POST', '/api/v3/metrics', { body });
  if (r.status !== 200) throw new Error(`POST /api/v3/metrics: ${r.status} ${r.text}`);
  return r.body;
}

/** The names restreamer-ui's main view queries (src/utils/restreamer.js, _getResources). */
const UI_NAMES = [
  'uptime_uptime', 'cpu_ncpu', 'cpu_idle', 'mem_total', 'mem_free', 'filesystem_limit', 'filesystem_usage',
  'session_limit', 'session_active', 'session_txbitrate', 'session_maxtxbitrate',
];

t.test('history: a running process\'s fps, sampled every interval_sec, resampled to the query step', async (t) => {
  const app = await startApp(t, { config: { metrics: { enable: true, interval_sec: 1, range_sec: 60 } } });
  await addProcess(app, nullProcess('p', { autostart: true }));
  await waitState(app, 'p', (s) => s.exec === 'running' && s.progress.frame > 0, 'running with frames');

  const now = await query(app, { timerange_sec: 0, metrics: [{ name: 'restream_process', labels: { processid: '^p$', name: '^fps$' } }] });
  t.equal(now.metrics.length, 1, 'one current series');
  t.same(now.metrics[0]!.labels, { processid: 'p', state: 'running', order: 'start', name: 'fps' });
  t.equal(now.metrics[0]!.values.length, 1, 'timerange 0: one point');

  const body = { timerange_sec: 20, interval_sec: 1, metrics: [
    { name: 'restream_process', labels: { processid: '^p$', name: '^(fps|frame)$' } },
  ] };
  const moved = (s: Series | undefined) => s !== undefined && new Set(s.values.map((v) => v[1])).size >= 3;
  const h = await waitFor(async () => {
    const r = await query(app, body);
    const byName = (n: string) => r.metrics.find((m) => m.labels?.name === n);
    return moved(byName('frame')) && byName('fps')!.values.some((v) => v[1] > 0) ? r : undefined;
  }, { timeout: 30_000, what: 'a moving frame series and a positive fps' });
  t.equal(h.interval_sec, 1, 'the configured interval');
  t.equal(h.timerange_sec, 60, 'the configured range');
  const frame = h.metrics.find((m) => m.labels?.name === 'frame')!;
  const ts = frame.values.map((v) => v[0]);
  t.ok(ts.every((x, i) => i === 0 || x - ts[i - 1]! === 1), 'points one query step (1 s) apart');
  t.ok(frame.values.every((v, i) => i === 0 || v[1] >= frame.values[i - 1]![1]), 'frames never go back');
  t.ok(frame.values.length <= 20, 'at most timerange/interval points');

  const coarse = await query(app, { ...body, interval_sec: 2 });
  const cts = coarse.metrics.find((m) => m.labels?.name === 'frame')!.values.map((v) => v[0]);
  t.ok(cts.every((x, i) => i === 0 || x - cts[i - 1]! === 2), 'a query step of 2 s gives points 2 s apart');
  t.same((await query(app, { ...body, interval_sec: 0 })).metrics, [], 'interval 0: no points');

  // state entries: a restart enters `running` a second time, per process and engine-wide
  t.equal(await command(app, 'p', 'restart'), 200);
  const entries = { metrics: [{ name: 'restream_process_states', labels: { processid: '^p$', state: '^running$' } }, { name: 'ffmpeg_process', labels: { state: '^running$' } }] };
  const after = await waitFor(async () => {
    const r = await query(app, entries);
    return r.metrics.length === 2 && r.metrics.every((m) => m.values[0]![1] === 2) ? r : undefined;
  }, { what: 'two entries into running' });
  t.pass(`entries counted: ${after.metrics.map((m) => m.name).join(', ')}`);
});

t.test('without history (metrics.enable false) current values answer, history is empty with a 0/0 resolution', async (t) => {
  const app = await startApp(t);
  const cur = await query(app, { metrics: [{ name: 'cpu_ncpu' }] });
  t.same([cur.timerange_sec, cur.interval_sec], [0, 0]);
  t.equal(cur.metrics.length, 1);
  t.equal(cur.metrics[0]!.labels, null, 'labels are null for a label-less metric');
  t.ok(cur.metrics[0]!.values[0]![1] > 0, 'at least some CPU');
  const hist = await query(app, { timerange_sec: 10, interval_sec: 1, metrics: [{ name: 'cpu_ncpu' }] });
  t.same(hist.metrics, []);
});

t.test('restreamer-ui\'s 11 names all answer, and without the sessions plugin the session figures are zeros', async (t) => {
  for (const plugins of [['*'], ['disk-fs', 'memfs', 'metrics']]) {
    const app = await startApp(t, { config: { plugins } });
    const r = await query(app, { metrics: UI_NAMES.map((name) => ({ name })) });
    for (const name of UI_NAMES) t.ok(r.metrics.some((m) => m.name === name), `${plugins.join(',')}: ${name} answers`);
    const value = (name: string, labels: Record<string, string>) => r.metrics
      .find((m) => m.name === name && Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))?.values[0]?.[1];
    for (const name of ['session_limit', 'session_active', 'session_txbitrate', 'session_maxtxbitrate']) {
      t.type(value(name, { collector: 'hls' }), 'number', `${plugins.join(',')}: ${name}{collector=hls}`);
    }
    for (const fs of ['memfs', 'diskfs']) t.type(value('filesystem_usage', { name: fs }), 'number', `filesystem_usage{name=${fs}}`);
    if (plugins[0] !== '*') t.equal(value('session_active', { collector: 'hls' }), 0, 'zero without sessions');
  }
});

t.test('label regexes: unanchored, all must match, a missing label or a bad regex matches nothing', async (t) => {
  const app = await startApp(t);
  const names = (r: { metrics: Series[] }) => r.metrics.map((m) => m.labels?.state).sort();
  t.same(names(await query(app, { metrics: [{ name: 'restream_state', labels: { state: 'ing' } }] })), ['finishing', 'running', 'starting'], 'unanchored');
  t.same(names(await query(app, { metrics: [{ name: 'restream_state', labels: { state: '^run', nope: '.*' } }] })), [], 'missing label');
  t.same(names(await query(app, { metrics: [{ name: 'restream_state', labels: { state: '(' } }] })), [], 'bad regex');
  t.same((await query(app, { metrics: [{ name: 'no_such_metric' }] })).metrics, [], 'unknown name');
  t.same((await query(app, {})).metrics, [], 'no metrics asked');
});

t.test('bad query bodies get 400 with the Error body', async (t) => {
  const app = await startApp(t);
  for (const raw of ['{', '[]', '{"metrics":"cpu_idle"}', '{"metrics":[{"labels":{}}]}', '{"timerange_sec":-1}', '{"metrics":[{"name":"x","labels":{"a":1}}]}']) {
    const r = await app.request('POST', '/api/v3/metrics', { raw, headers: { 'content-type': 'application/json' } });
    t.equal(r.status, 400, raw);
    t.same(Object.keys(r.body).sort(), ['code', 'details', 'message'], `${raw}: Error body`);
  }
});

t.test('GET /api/v3/metrics: descriptions sorted by name, labels [] when none', async (t) => {
  const app = await startApp(t);
  const r = await app.request('GET', '/api/v3/metrics');
  t.equal(r.status, 200);
  const names = r.body.map((d: { name: string }) => d.name);
  t.same(names, [...names].sort(), 'sorted');
  t.same(r.body.find((d: { name: string }) => d.name === 'cpu_idle').labels, []);
  t.same(r.body.find((d: { name: string }) => d.name === 'restream_io').labels,
    ['processid', 'type', 'id', 'address', 'index', 'stream', 'media', 'name']);
  for (const n of [...UI_NAMES, 'filesystem_files', 'restream_process_states', 'ffmpeg_process', 'net_rx', 'disk_total']) t.ok(names.includes(n), n);
});

t.test('without the metrics plugin the routes are 404', async (t) => {
  const app = await startApp(t, { config: { plugins: ['disk-fs', 'memfs'] } });
  t.equal((await app.request('GET', '/api/v3/metrics')).status, 404);
  t.equal((await app.request('POST', '/api/v3/metrics', { body: {} })).status, 404);
  t.equal((await app.request('GET', '/metrics')).status, 404);
});

t.test('the plugin owns metrics.*: an enabled history with a bad interval is a 409 naming the key', async (t) => {
  const app = await startApp(t);
  const r = await app.request('PUT', '/api/v3/config', { body: { metrics: { enable: true, interval_sec: 0 } } });
  t.equal(r.status, 409);
  t.match(JSON.stringify(r.body), /metrics\.interval_sec/);
  const off = await app.request('PUT', '/api/v3/config', { body: { metrics: { enable: false, interval_sec: 0 } } });
  t.equal(off.status, 200, 'not checked while the history is off');
});
