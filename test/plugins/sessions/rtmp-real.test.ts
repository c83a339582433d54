import t from 'tap';
import { waitFor } from '../../helpers/wait.ts';
import { startRtmpApp, publish, play } from '../rtmp/helpers.ts';
import { active, summary } from './helpers.ts';

/*
 * The sessions plugin counts a real RTMP publisher and player (real ffmpeg on both ends) through the
 * ingest hooks alone: it knows nothing about RTMP. Loopback is counted because the ignore list is empty.
 */
t.test('a real RTMP publisher and player are rtmp sessions, closed into the history when they leave', async (t) => {
  const app = await startRtmpApp(t, {}, { sessions: { enable: true, ip_ignorelist: [] } });
  const pub = publish(t, `${app.base}/live/counted.stream`, { seconds: 60 });
  await waitFor(() => app.rtmp.channels().length === 1, { what: 'the publisher is live', timeout: 30_000 });
  const player = play(t, `${app.base}/live/counted.stream`);
  await waitFor(() => player.frames().length >= 5, { what: 'the player decodes frames', timeout: 30_000 });

  const list = await waitFor(async () => {
    const l = await active(app, 'rtmp');
    return l.length === 2 && l.every((s: any) => s.bytes_rx > 0 || s.bytes_tx > 0) ? l : undefined;
  }, { what: 'publisher and player with traffic', timeout: 30_000 });
  const locals = list.map((s: any) => s.local).sort();
  t.same(locals, ['play:/live/counted.stream', 'publish:/live/counted.stream']);
  t.ok(list.every((s: any) => s.reference === 'counted'), 'reference is the name without app and extension');
  const playing = list.find((s: any) => s.local.startsWith('play:'));
  const publishing = list.find((s: any) => s.local.startsWith('publish:'));
  await waitFor(async () => ((await active(app, 'rtmp')).find((s: any) => s.id === playing.id)?.bytes_tx ?? 0) > 0, { what: 'player egress counted', timeout: 30_000 });
  t.ok(publishing.bytes_rx > 0 || (await active(app, 'rtmp')).some((s: any) => s.id === publishing.id && s.bytes_rx > 0), 'publisher ingress counted');

  pub.child.kill('SIGKILL');
  await player.done;
  await waitFor(async () => (await active(app, 'rtmp')).length === 0, { what: 'both sessions closed', timeout: 30_000 });
  t.equal((await summary(app, 'rtmp')).summary.sessions, 2, 'both went into the history');
});
