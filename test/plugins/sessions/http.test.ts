import t from 'tap';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { addProcess, nullProcess } from '../../core/process/helpers.ts';
import { metricCollectorsRef, type MetricCollector } from '../../../plugins/metrics/api.ts';
import { active, summary } from './helpers.ts';
import { MEDIA, view } from './viewer.ts';

const OPEN = { ip_ignorelist: [], session_timeout_sec: 2 };
const put = (url: string, path: string, body: string) => fetch(`${url}/memfs${path}`, { method: 'PUT', body });

t.test('one viewer is one session whether it starts with or without ?session=; fMP4 segments count', async (t) => {
  const app = await startApp(t, { config: { sessions: OPEN, storage: { memory: { auth: { enable: false } } } } });
  await put(app.url, '/f.m3u8', '#EXTM3U\n#EXT-X-MAP:URI="init.mp4"\n#EXTINF:1,\nf1.m4s\n');
  await put(app.url, '/init.mp4', 'i'.repeat(500));
  await put(app.url, '/f1.m4s', 's'.repeat(2000));
  const { id, segments } = await view(app.url, '/memfs/f.m3u8');
  t.same(segments, [`f1.m4s?session=${id}`]);
  for (let i = 0; i < 3; i++) await (await fetch(`${app.url}/memfs/f.m3u8?session=${id}`)).text();
  const init = await fetch(`${app.url}/memfs/init.mp4?session=${id}`);
  t.equal(init.status, 200);
  await init.arrayBuffer();
  // a serving thread (the suite's threads-on run) reports what it answered within half a second
  const list = await waitFor(async () => {
    const l = await active(app);
    return l.length === 1 && l[0].bytes_tx > 2500 ? l : undefined;
  }, { timeout: 5000, what: 'the viewer\'s session with its bytes' }).catch(async () => active(app));
  t.equal(list.length, 1, 'one session for playlist reloads and segments');
  t.equal(list[0].id, id);
  t.ok(list[0].bytes_tx > 2500, `segment, init and playlists counted (${list[0].bytes_tx})`);

  const bad = await fetch(`${app.url}/memfs/f.m3u8?session=not-a-short-uuid`);
  t.same([bad.status, await bad.json()], [403, { code: 403, message: 'Forbidden', details: ['Invalid session ID'] }]);
  const head = await fetch(`${app.url}/memfs/f.m3u8?session=${id}`, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(head.headers.get('cache-control'), 'private');
});

t.test('disk playlists are tracked too (the route, not the memfs fast path)', async (t) => {
  const app = await startApp(t, { config: { sessions: OPEN } });
  await writeFile(join(app.dir, 'disk', 'd.m3u8'), MEDIA);
  await writeFile(join(app.dir, 'disk', 'p0.ts'), 'a'.repeat(100));
  await writeFile(join(app.dir, 'disk', 'p1.ts'), 'b'.repeat(100));
  const { id } = await view(app.url, '/d.m3u8');
  const list = await active(app);
  t.same(list.map((s: any) => [s.id, s.local, s.reference]), [[id, '/d.m3u8', 'd']]);
  await waitFor(async () => (await summary(app)).summary.local['/d.m3u8']?.sessions === 1, { what: 'closed after the timeout' });
});

t.test('session metrics per collector for the metrics plugin', async (t) => {
  const app = await startApp(t, { config: { sessions: { ...OPEN, max_sessions: 7, max_bitrate_mbit: 2 }, storage: { memory: { auth: { enable: false } } } } });
  const collectors = app.service.app.kernel.services.resolve(metricCollectorsRef) as MetricCollector[];
  const mine = collectors.find((c) => c.describe().some((d) => d.name === 'session_active'))!;
  t.ok(mine, 'provided');
  t.same(mine.describe().map((d) => d.name).sort(), [
    'session_active', 'session_limit', 'session_maxrxbitrate', 'session_maxtxbitrate', 'session_rxbitrate', 'session_rxbytes',
    'session_total', 'session_txbitrate', 'session_txbytes',
  ]);
  const values = mine.collect();
  const get = (name: string, collector: string) => values.find((v) => v.name === name && v.labels.collector === collector)?.value;
  t.equal(get('session_limit', 'hls'), 7);
  t.equal(get('session_maxtxbitrate', 'hls'), 2 * 1024 * 1024);
  t.equal(get('session_active', 'rtmp'), 0);
  t.same((await summary(app)).active.max_bandwidth_tx_mbit, 2);

  // through the metrics plugin: an active viewer shows in session_active{collector=hls}
  await put(app.url, '/m.m3u8', MEDIA);
  await put(app.url, '/p0.ts', 'x');
  await view(app.url, '/memfs/m.m3u8');
  const ask = () => app.request('POST', '/api/v3/metrics', { body: { metrics: [{ name: 'session_active', labels: { collector: '^hls$' } }] } });
  const shown = (r: Awaited<ReturnType<typeof ask>>) => r.body.metrics.map((m: any) => [m.labels, m.values[0][1]]);
  // a serving thread (the threads-on run) reports the viewer within half a second
  const r = await waitFor(async () => { const x = await ask(); return JSON.stringify(shown(x)) === JSON.stringify([[{ collector: 'hls' }, 1]]) ? x : undefined; },
    { timeout: 5000, what: 'the active viewer in the metrics' }).catch(ask);
  t.equal(r.status, 200);
  t.same(shown(r), [[{ collector: 'hls' }, 1]]);
});

t.test('without sessions: empty summaries, widget zeros, playlists untouched', async (t) => {
  const app = await startApp(t, { config: { sessions: { enable: false, ip_ignorelist: [] }, storage: { memory: { auth: { enable: false } } } } });
  await put(app.url, '/z.m3u8', MEDIA);
  t.equal(await (await fetch(`${app.url}/memfs/z.m3u8`)).text(), MEDIA);
  const s = await app.request('GET', '/api/v3/session?collectors=hls,rtmp');
  t.same(Object.keys(s.body), ['hls', 'rtmp']);
  t.same(s.body.hls.active.list, []);
  t.same((await app.request('GET', '/api/v3/session')).body[''].summary.sessions, 0, 'no collectors= gives the empty name');
  t.same((await app.request('GET', '/api/v3/session/active?collectors=hls')).body, { hls: [] });
  await addProcess(app, nullProcess('w'));
  t.same((await app.request('GET', '/api/v3/widget/process/w')).body, { current_sessions: 0, total_sessions: 0, uptime: 0 });
});

t.test('sessions config rules live in the plugin: a bad CIDR in the ignore list is refused', async (t) => {
  const app = await startApp(t);
  const cfg = (await app.request('GET', '/api/v3/config')).body.config;
  cfg.sessions.ip_ignorelist = ['not-a-cidr'];
  const r = await app.request('PUT', '/api/v3/config', { body: cfg });
  t.equal(r.status, 409);
  t.match(JSON.stringify(r.body), /sessions\.ip_ignorelist/);
});

t.test('max_bitrate_mbit: a new viewer is refused once the egress top rate reaches it; the known one keeps its session', async (t) => {
  const app = await startApp(t, { config: { sessions: { ...OPEN, session_timeout_sec: 30, max_bitrate_mbit: 1 }, storage: { memory: { auth: { enable: false } } } } });
  await put(app.url, '/b.m3u8', '#EXTM3U\n#EXTINF:1,\nb0.ts\n');
  // the upload counts too (2 x the playlist's ingress rate): 100 KiB keep it well under the limit
  await put(app.url, '/b0.ts', 'z'.repeat(100 * 1024));
  const first = await fetch(`${app.url}/memfs/b.m3u8`);
  t.equal(first.status, 200, 'under the limit a new viewer is welcome');
  await first.text();
  const { id } = await view(app.url, '/memfs/b.m3u8');
  // 3 MiB within the 10 s window: about 2.5 Mbit/s of egress, over the 1 Mbit/s limit
  for (let i = 0; i < 30; i++) await (await fetch(`${app.url}/memfs/b0.ts?session=${id}`)).arrayBuffer();
  const refused = await waitFor(async () => {
    const r = await fetch(`${app.url}/memfs/b.m3u8`);
    const body = await r.text();
    return r.status === 509 ? JSON.parse(body) : undefined;
  }, { timeout: 20_000, what: 'the bitrate check refuses a new viewer' });
  t.same(refused.details, ['Bitrate limit exceeded']);
  const known = await fetch(`${app.url}/memfs/b.m3u8?session=${id}`);
  t.equal(known.status, 200, 'the known viewer keeps playing');
  t.match(await known.text(), `b0.ts?session=${id}`);
});

t.test('without the sessions plugin: no session routes, playlists untouched, widget zeros', async (t) => {
  const app = await startApp(t, { config: { plugins: ['disk-fs', 'memfs', 'widget'], storage: { memory: { auth: { enable: false } } } } });
  await put(app.url, '/n.m3u8', MEDIA);
  t.equal(await (await fetch(`${app.url}/memfs/n.m3u8`)).text(), MEDIA);
  t.equal((await app.request('GET', '/api/v3/session?collectors=hls')).status, 404);
  await addProcess(app, nullProcess('n'));
  t.same((await app.request('GET', '/api/v3/widget/process/n')).body, { current_sessions: 0, total_sessions: 0, uptime: 0 });
});

t.test('the http collector counts all HTTP traffic of the listener as one session, headers included', async (t) => {
  const app = await startApp(t, { config: { sessions: OPEN } });
  const s = await waitFor(async () => {
    // these requests are traffic themselves: counted from the sockets once a second
    const list = await active(app, 'http');
    return list.length === 1 && list[0].bytes_rx > 0 && list[0].bytes_tx > 0 ? list[0] : undefined;
  }, { what: 'http session with traffic' });
  t.match(s, { id: 'HTTP', reference: '', local: 'any', remote: 'any' });
});
