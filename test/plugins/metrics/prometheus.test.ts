import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { addProcess, nullProcess, waitState } from '../../core/process/helpers.ts';

interface Sample { name: string; labels: Record<string, string>; value: number }

/**
 * A small parser of the Prometheus text exposition format (0.0.4): every sample line must be
 * `name{labels} value` of a metric announced by a `# TYPE` line, or it throws.
 */
function parseExposition(text: string): { types: Map<string, string>; samples: Sample[] } {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('# HELP ')) continue;
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    const body = m[2] ?? '';
    const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;
    let pos = 0;
    for (let l = re.exec(body); l; l = re.exec(body)) {
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
      pos = re.lastIndex;
    }
    if (pos !== body.length) throw new Error(`bad labels: ${line}`);
    const value = Number(m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : m[3]);
    if (Number.isNaN(value) && m[3] !== 'NaN') throw new Error(`bad value: ${line}`);
    if (!types.has(m[1]!)) throw new Error(`sample without TYPE: ${line}`);
    samples.push({ name: m[1]!, labels, value });
  }
  return { types, samples };
}

t.test('/metrics: parses, core=<id> on every series, reference 12.5 names and labels', async (t) => {
  const app = await startApp(t, { config: { id: 'core-a', metrics: { enable_prometheus: true } } });
  await addProcess(app, nullProcess('p1', { autostart: true }));
  await waitState(app, 'p1', (s) => s.exec === 'running' && s.progress.frame > 0, 'running');

  const { types, samples } = await waitFor(async () => {
    const r = await app.request('GET', '/metrics');
    if (r.status !== 200) throw new Error(`status ${r.status}`);
    t.match(r.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
    const parsed = parseExposition(r.text);
    return parsed.samples.some((s) => s.name === 'ffmpeg_process_io') ? parsed : undefined;
  }, { what: 'the process streams in /metrics' });

  t.ok(samples.length > 20, 'many series');
  t.same(samples.filter((s) => s.labels.core !== 'core-a').map((s) => s.name), [], 'every series carries core=core-a');
  t.equal(types.get('uptime_seconds'), 'counter');
  t.equal(types.get('ffmpeg_states_total'), 'counter');
  t.equal(types.get('ffmpeg_states'), 'gauge');
  const states = samples.filter((s) => s.name === 'ffmpeg_states').map((s) => s.labels.state).sort();
  t.same(states, ['failed', 'finished', 'finishing', 'killed', 'running', 'starting'], 'all six states');
  t.equal(samples.find((s) => s.name === 'ffmpeg_states' && s.labels.state === 'running')?.value, 1);
  t.ok(samples.find((s) => s.name === 'ffmpeg_states_total' && s.labels.state === 'running')!.value >= 1);
  const fps = samples.find((s) => s.name === 'ffmpeg_process' && s.labels.process === 'p1' && s.labels.name === 'fps');
  t.same(fps && Object.keys(fps.labels).sort(), ['core', 'name', 'order', 'process', 'state']);
  const io = samples.find((s) => s.name === 'ffmpeg_process_io' && s.labels.process === 'p1');
  t.same(io && Object.keys(io.labels).sort(), ['core', 'id', 'index', 'media', 'name', 'process', 'stream', 'type'], 'no address label');
  t.ok(samples.some((s) => s.name === 'ffmpeg_process_states' && s.labels.process === 'p1' && s.labels.state === 'running' && s.value >= 1));
  for (const fs of ['memfs', 'diskfs']) t.ok(samples.some((s) => s.name === 'filesystem_usage_bytes' && s.labels.name === fs), fs);
  for (const n of ['mem_total_bytes', 'cpu_idle_time_percent', 'session_total', 'session_active']) t.ok(samples.some((s) => s.name === n), n);

  const again = parseExposition((await app.request('GET', '/metrics')).text);
  t.ok(again.samples.some((s) => s.name === 'promhttp_metric_handler_requests_total' && s.labels.code === '200' && s.value >= 1), 'scrapes counted');
});

t.test('two apps in one process keep their own registry', async (t) => {
  const a = await startApp(t, { config: { id: 'one', metrics: { enable_prometheus: true } } });
  const b = await startApp(t, { config: { id: 'two', metrics: { enable_prometheus: true } } });
  const cores = async (app: typeof a) => new Set(parseExposition((await app.request('GET', '/metrics')).text).samples.map((s) => s.labels.core));
  t.same([...await cores(a)], ['one']);
  t.same([...await cores(b)], ['two']);
});

t.test('/metrics is 404 unless metrics.enable_prometheus; no credential needed when auth is on', async (t) => {
  const app = await startApp(t);
  t.equal((await app.request('GET', '/metrics')).status, 404);
  const authed = await startApp(t, { config: {
    metrics: { enable_prometheus: true }, api: { auth: { enable: true, username: 'admin', password: 'secret-pass' } },
  } });
  t.equal((await authed.request('GET', '/metrics')).status, 200, 'scraped without a token');
  t.equal((await authed.request('POST', '/api/v3/metrics', { body: {} })).status, 401, 'the query API wants one');
});
