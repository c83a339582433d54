import t from 'tap';
import { fileURLToPath } from 'node:url';
import { startRtmpApp, publish, play } from './helpers.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ingestRecorderRef, type IngestRecorder } from './fixtures/ingest-recorder.ts';

const recorder = fileURLToPath(new URL('./fixtures/ingest-recorder.ts', import.meta.url));

async function start(t: Parameters<typeof startRtmpApp>[0]) {
  const app = await startRtmpApp(t, { token: 'tk' }, { plugins: ['*', recorder] });
  const rec = app.service.app.kernel.services.resolve(ingestRecorderRef) as IngestRecorder;
  const hooks = (id: string) => rec.events.filter((e) => e.id === id).map((e) => e.hook);
  return { app, rec, hooks };
}

t.test('publish and play fire each ingest hook exactly once, with bytes', async (t) => {
  const { app, rec, hooks } = await start(t);
  const pub = publish(t, `${app.base}/live/h.stream?token=tk&camera=3`, { seconds: 60 });
  await waitFor(() => rec.events.some((e) => e.hook === 'onPublish'), { what: 'onPublish' });
  const pubId = rec.events.find((e) => e.hook === 'onPublish')!.id;
  const p = play(t, `${app.base}/live/h.stream?token=tk`, { frames: 10 });
  t.equal(await p.done, 0);
  await waitFor(() => rec.events.some((e) => e.hook === 'onPlayEnd'), { what: 'onPlayEnd' });
  pub.child.kill('SIGKILL');
  await waitFor(() => rec.events.some((e) => e.hook === 'onPublishEnd'), { what: 'onPublishEnd' });

  t.same(hooks(pubId), ['prePublish', 'onPublish', 'onPublishEnd']);
  const playId = rec.events.find((e) => e.hook === 'onPlay')!.id;
  t.same(hooks(playId), ['prePlay', 'onPlay', 'onPlayEnd']);
  const pe = rec.events.find((e) => e.hook === 'onPublishEnd')!;
  t.match(pe, { protocol: 'rtmp', stream: '/live/h.stream', token: 'tk', remote: /^127\.0\.0\.1:\d+$/ });
  t.ok(pe.traffic!.rxBytes > 10_000, `publisher rx ${pe.traffic!.rxBytes}`);
  const ple = rec.events.find((e) => e.hook === 'onPlayEnd')!;
  t.ok(ple.traffic!.txBytes > 5_000, `player tx ${ple.traffic!.txBytes}`);
});

t.test('while prePublish runs the stream is neither listed nor playable; a veto refuses', async (t) => {
  const { app, rec, hooks } = await start(t);
  const open = rec.holdNextPublish();
  publish(t, `${app.base}/live/held?token=tk`, { seconds: 60 });
  await waitFor(() => rec.events.some((e) => e.hook === 'prePublish'), { what: 'prePublish entered' });
  const heldId = rec.events[0]!.id;
  t.same((await app.request('GET', '/api/v3/rtmp')).body, [], 'not listed while held');
  t.not(await play(t, `${app.base}/live/held?token=tk`).done, 0, 'not playable while held');
  open();
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body.length === 1, { what: 'accepted after the hook' });
  t.same(hooks(heldId), ['prePublish', 'onPublish']);
  const p = play(t, `${app.base}/live/held?token=tk`, { frames: 5 });
  t.equal(await p.done, 0, 'media held during the check is delivered after it');

  const vetoed = publish(t, `${app.base}/live/vetoed?token=tk`, { seconds: 5 });
  t.not(await vetoed.done, 0, 'vetoed publisher refused');
  const vId = rec.events.find((e) => e.stream === '/live/vetoed')!.id;
  t.same(hooks(vId), ['prePublish'], 'a refused connection gets no on* hook');
  t.match(JSON.stringify((await app.request('GET', '/api/v3/log')).body), /rtmp publish refused: vetoed by the vendor/);
  t.same((await app.request('GET', '/api/v3/rtmp')).body, [{ name: '/live/held' }]);
});

t.test('the plugin checks its own token before asking the hooks', async (t) => {
  const { app, rec } = await start(t);
  t.not(await publish(t, `${app.base}/live/x?token=wrong`, { seconds: 3 }).done, 0);
  t.same(rec.events, [], 'no hook saw the refused publisher');
});
