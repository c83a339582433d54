import t from 'tap';
import { waitFor } from '../../helpers/wait.ts';
import { play, publish, startRtmpApp } from '../rtmp/helpers.ts';
import { SseClient } from './sse-client.ts';

t.test('RTMP: publisher started/stopped and player joined/left, with bytes', async (t) => {
  const app = await startRtmpApp(t);
  const c = await SseClient.open(`${app.url}/api/v3/events?types=ingest.*&subjects=stream:/live/*`);
  t.teardown(() => c.close());
  const pub = publish(t, `${app.base}/live/ev.stream`, { seconds: 60 });
  const started = await c.next((e) => e.type === 'ingest.publish.start', 'ingest.publish.start');
  t.match(started, { subject: { stream: '/live/ev.stream', protocol: 'rtmp' }, payload: { remote: /^127\.0\.0\.1:\d+$/ } });
  const p = play(t, `${app.base}/live/ev.stream`, { frames: 10 });
  t.equal(await p.done, 0);
  const left = await c.next((e) => e.type === 'ingest.play.stop', 'ingest.play.stop');
  t.ok(left.payload.tx_bytes > 0, 'the player got bytes');
  pub.child.kill('SIGKILL');
  const stopped = await c.next((e) => e.type === 'ingest.publish.stop', 'ingest.publish.stop');
  t.equal(stopped.subject.peer, started.subject.peer, 'the same connection');
  t.ok(stopped.payload.rx_bytes > 0);
  await waitFor(() => c.events.length >= 4, { what: 'four events' });
  t.same(c.events.map((e) => e.type), ['ingest.publish.start', 'ingest.play.start', 'ingest.play.stop', 'ingest.publish.stop']);
});
