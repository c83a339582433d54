import t from 'tap';
import { fileURLToPath } from 'node:url';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { active, summary } from './helpers.ts';

const FAKE = fileURLToPath(new URL('./fixtures/fake-ingest.ts', import.meta.url));

t.test('rtmp and srt publishers and players reported through the ingest hooks are counted', async (t) => {
  const app = await startApp(t, { config: { plugins: ['*', FAKE], sessions: { ip_ignorelist: ['10.0.0.0/8'] } } });
  const post = (p: string) => app.request('POST', p);
  t.equal((await post('/vendor/ingest/rtmp/publish/rtmp-1?stream=/live/cam.stream&remote=192.0.2.5:4000')).status, 200);
  await post('/vendor/ingest/rtmps/play/rtmp-2?stream=/live/cam.stream&remote=192.0.2.6:4001');
  await post('/vendor/ingest/srt/play/srt-1?stream=cam&remote=192.0.2.7:5000');
  await post('/vendor/ingest/srt/play/srt-2?stream=cam&remote=10.1.2.3:5000');

  const rtmp = await active(app, 'rtmp');
  t.same(rtmp.map((s: any) => [s.reference, s.local, s.remote]).sort(), [
    ['cam', 'play:/live/cam.stream', '192.0.2.6:4001'],
    ['cam', 'publish:/live/cam.stream', '192.0.2.5:4000'],
  ]);
  const srt = await active(app, 'srt');
  t.same(srt.map((s: any) => [s.reference, s.local, s.remote]), [['cam', 'play:cam', '192.0.2.7:5000']], 'the ignore list applies to SRT too');

  await post('/vendor/ingest/traffic/rtmp-1?rx=5000');
  await post('/vendor/ingest/traffic/srt-1?tx=7000');
  await waitFor(async () => (await active(app, 'rtmp')).some((s: any) => s.bytes_rx === 5000), { what: 'polled rtmp ingress' });
  await waitFor(async () => (await active(app, 'srt'))[0]?.bytes_tx === 7000, { what: 'polled srt egress' });

  await post('/vendor/ingest/traffic/srt-1?tx=1000');
  await app.request('DELETE', '/vendor/ingest/srt-1');
  t.same(await active(app, 'srt'), []);
  const s = await summary(app, 'srt');
  t.equal(s.summary.sessions, 1);
  t.same(s.summary.remote['192.0.2.7:5000'].local['play:cam'].sessions, 1);
  t.equal(s.summary.traffic_tx_mb, 0, '8000 bytes are 0 MB (integer)');

  await app.request('DELETE', '/vendor/ingest/rtmp-1');
  await app.request('DELETE', '/vendor/ingest/rtmp-2');
  t.equal((await summary(app, 'rtmp')).summary.sessions, 2);
});

t.test('the history survives a config reload (no persist needed); sessions live at the reload are closed into it', async (t) => {
  const app = await startApp(t, { config: { plugins: ['*', FAKE], sessions: { ip_ignorelist: [] } } });
  await app.request('POST', '/vendor/ingest/srt/publish/srt-9?stream=feed&remote=192.0.2.9:6000');
  await app.request('POST', '/vendor/ingest/srt/play/srt-10?stream=feed&remote=192.0.2.10:6000');
  await app.request('DELETE', '/vendor/ingest/srt-10');
  t.equal((await summary(app, 'srt')).summary.sessions, 1);
  const before = app.service.app;
  t.equal((await app.request('GET', '/api/v3/config/reload')).status, 200);
  await waitFor(() => app.service.app !== before && app.service.app.kernel.plugins.includes('sessions'), { what: 'reload' });
  const s = await waitFor(async () => {
    const r = await app.request('GET', '/api/v3/session?collectors=srt');
    return r.status === 200 ? r.body.srt : undefined;
  }, { what: 'sessions routes back' });
  t.equal(s.summary.sessions, 2, 'the closed player and the publisher cut by the reload');
  t.same(s.active.list, []);
});
