import t from 'tap';
import { request } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { startRtmpApp, startRtmpCli, publish, play } from './helpers.ts';
import { hold, lifetime, serveOnce, type Attack } from './attack-kit.ts';
import { RawRtmp, session } from './wire-kit.ts';

/*
 * Bounds (issue 27.3): handshake and idle timeouts, connection caps in total and per address.
 * The attackers connect from other loopback addresses (127.0.0.2, .3) than the legitimate
 * clients (127.0.0.1), as strangers would from their own hosts.
 */

const MB = 1024 * 1024;
const closedIn = (a: Attack, deadline: number) => Promise.race([a.allClosed().then(() => true), new Promise<false>((r) => setTimeout(() => r(false), deadline))]);

t.test('600 silent and trickling connections: timed out, refused beyond the per-address cap, memory bounded, legitimate clients served', async (t) => {
  const app = await startRtmpCli(t, { handshake_timeout_seconds: 3, idle_timeout_seconds: 2, max_connections_per_address: 200 });
  publish(t, `${app.base}/live/legit`, { seconds: 300 });
  await waitFor(async () => (await request(app.url, 'GET', '/api/v3/rtmp')).body.length === 1, { what: 'the publisher listed' });
  const player = play(t, `${app.base}/live/legit`);
  await waitFor(() => player.frames().length > 3, { what: 'the player running' });
  t.ok((await serveOnce(app.port, 'warm-up')).ok, 'served before the attack');
  const before = app.memory().rss;

  const silent = hold(app.port, 300, { localAddress: '127.0.0.2' });
  const trickling = hold(app.port, 300, { localAddress: '127.0.0.3', trickleMs: 250 });
  t.teardown(() => { silent.stop(); trickling.stop(); });
  let peak = before;
  const sampler = setInterval(() => { peak = Math.max(peak, app.memory().rss); }, 50);
  t.teardown(() => clearInterval(sampler));

  const served = await serveOnce(app.port, 'during');
  t.ok(served.ok, 'a legitimate publisher and player are served during the attack');
  t.ok(served.ms < 1000, `... within 1 s (${served.ms} ms)`);
  const framesDuring = player.frames().length;

  t.ok(await closedIn(silent, 30_000), 'every silent connection was closed');
  t.ok(await closedIn(trickling, 30_000), 'every trickling connection was closed');
  clearInterval(sampler);
  // an admitted connection lives at least the shorter timeout (2 s); a refused one is closed at accept
  const refused = (a: Attack) => a.conns.filter((c) => lifetime(c) < 2000);
  t.equal(refused(silent).length, 100, 'silent: 200 admitted (rtmp.max_connections_per_address), 100 refused');
  t.equal(refused(trickling).length, 100, 'trickling: 200 admitted, 100 refused');
  t.ok(trickling.conns.filter((c) => lifetime(c) >= 2000).every((c) => lifetime(c) >= 3000), 'trickling ones (never idle) closed by the handshake timeout');
  t.ok(peak - before < 100 * MB, `RSS grew ${((peak - before) / MB).toFixed(1)} MiB at most (bound 100)`);
  const back = await waitFor(() => { const rss = app.memory().rss; return rss < before + 20 * MB ? rss : 0; }, { what: 'RSS back near its value before', timeout: 30_000 });
  t.pass(`RSS back at ${((back - before) / MB).toFixed(1)} MiB above before`);

  await waitFor(() => player.frames().length > framesDuring + 5, { what: 'the ffmpeg player still receiving' });
  t.equal(player.child.exitCode, null, 'the ffmpeg player never stopped');
  const log = await app.log();
  t.ok(log.some((l) => l.includes('rtmp connection closed: idle for 2 s (rtmp.idle_timeout_seconds)')), 'idle timeouts logged');
  t.ok(log.some((l) => l.includes('rtmp connection closed: no publish or play within 3 s (rtmp.handshake_timeout_seconds)')), 'handshake timeouts logged');
  t.ok(log.some((l) => /rtmp connection refused: \d+ connections open from 127\.0\.0\.2 \(rtmp\.max_connections_per_address\)/.test(l)), 'refusals logged with the address');
});

t.test('the total cap counts every address; a closed connection frees its place', async (t) => {
  const app = await startRtmpApp(t, { max_connections: 20, max_connections_per_address: 15, handshake_timeout_seconds: 120, idle_timeout_seconds: 120 });
  const port = app.rtmp.ports().rtmp;
  const a = hold(port, 20, { localAddress: '127.0.0.2' });
  t.teardown(() => a.stop());
  await waitFor(() => a.conns.filter((c) => c.closedAt).length === 5, { what: '5 refused by the per-address cap' });
  const b = hold(port, 10, { localAddress: '127.0.0.3' });
  t.teardown(() => b.stop());
  await waitFor(() => b.conns.filter((c) => c.closedAt).length === 5, { what: '5 refused by the total cap' });
  t.equal((await serveOnce(port, 'full', 2000)).ok, false, 'a 21st connection is refused too');
  const log = JSON.stringify((await app.request('GET', '/api/v3/log')).body);
  t.match(log, /rtmp connection refused: 15 connections open from 127\.0\.0\.2 \(rtmp\.max_connections_per_address\)/);
  t.match(log, /rtmp connection refused: 20 connections open \(rtmp\.max_connections\)/);
  a.stop();
  await waitFor(async () => (await serveOnce(port, 'freed', 2000)).ok, { what: 'places freed by closed connections' });
  t.equal(b.conns.filter((c) => c.closedAt).length, 5, 'the admitted ones of the second address stay open');
});

t.test('a publisher that falls silent is closed by the idle timeout (its player with it); a player receiving media is not', async (t) => {
  const app = await startRtmpApp(t, { idle_timeout_seconds: 1, handshake_timeout_seconds: 60 });
  const port = app.rtmp.ports().rtmp;
  const busy = publish(t, `${app.base}/live/busy`, { seconds: 120 });
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body.length === 1, { what: 'the busy one published' });
  const quiet = await RawRtmp.open(port);
  await quiet.handshake();
  quiet.write(session(port, 'live', 'quiet', 'publish'));
  const quietPlayer = await RawRtmp.open(port);
  await quietPlayer.handshake();
  quietPlayer.write(session(port, 'live', 'quiet', 'play'));
  const busyPlayer = await RawRtmp.open(port);
  await busyPlayer.handshake();
  busyPlayer.write(session(port, 'live', 'busy', 'play'));

  await quiet.closed;
  await quietPlayer.closed;
  const received = busyPlayer.received;
  await waitFor(() => busyPlayer.received > received + 10_000, { what: 'the busy player still receiving after the quiet ones were closed' });
  t.notOk(busyPlayer.isClosed, 'a player that only receives is not idle');
  t.equal(busy.child.exitCode, null);
  busyPlayer.close();
  const log = (await app.request('GET', '/api/v3/log')).body as string[];
  t.ok(log.some((l) => l.includes('idle for 1 s') && l.includes('stream="/live/quiet"')), 'logged under the stream');
  t.same((await app.request('GET', '/api/v3/rtmp')).body, [{ name: '/live/busy' }]);
});
