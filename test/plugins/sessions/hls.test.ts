import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { active, liveHls, player, summary } from './helpers.ts';

const SESSIONS = { ip_ignorelist: [], session_timeout_sec: 3, max_sessions: 2 };

t.test('two ffmpeg players of a live memfs stream are two hls sessions; a third is refused; they close after the timeout', async (t) => {
  const app = await startApp(t, { config: { sessions: SESSIONS } });
  await liveHls(app, 'live');
  const url = `${app.url}/memfs/live.m3u8`;
  const a = player(t, url);
  const b = player(t, url);
  const two = await waitFor(async () => {
    const list = await active(app);
    return list.length === 2 && list.every((s) => s.bytes_tx > 0) ? list : undefined;
  }, { timeout: 30_000, what: 'two active hls sessions' });
  t.same(two.map((s: any) => s.reference), ['live', 'live']);
  t.same(two.map((s: any) => s.local), ['/memfs/live.m3u8', '/memfs/live.m3u8']);
  t.match(two[0].extra, /^\[127\.0\.0\.0\] Lavf/);
  t.not(two[0].id, two[1].id);

  const refused = await fetch(url);
  t.equal(refused.status, 509);
  t.same(await refused.json(), { code: 509, message: 'Bandwith limit exceeded', details: ['Number of sessions exceeded'] });
  const refusedHead = await fetch(url, { method: 'HEAD' });
  t.equal(refusedHead.status, 509, 'HEAD refused the same way');
  t.equal(refusedHead.headers.get('content-type'), null, 'a HEAD error carries no body type');
  const third = player(t, url);
  const code = await third.exited;
  t.not(code, 0, 'the third player gives up');
  t.match(third.stderr(), /509|5XX|Server returned/i, `third player refused (${third.stderr()})`);
  const before = new Map(two.map((s: any) => [s.id, s.bytes_tx]));
  const frames = [a.frames(), b.frames()];
  await waitFor(async () => {
    const list = await active(app);
    return list.length === 2 && list.every((s) => s.bytes_tx > before.get(s.id)!) && a.frames() > frames[0]! && b.frames() > frames[1]!;
  }, { timeout: 30_000, what: 'the two players keep playing' });
  t.equal(a.child.exitCode, null, 'player a still plays');
  t.equal(b.child.exitCode, null, 'player b still plays');
  t.equal((await summary(app)).active.max_sessions, 2);

  await a.stop();
  await b.stop();
  const closed = await waitFor(async () => {
    const s = await summary(app);
    return s.active.sessions === 0 && s.summary.sessions === 2 ? s : undefined;
  }, { timeout: 30_000, what: 'both sessions closed into the history' });
  t.same(closed.summary.reference.live.sessions, 2);
  t.same(closed.summary.local['/memfs/live.m3u8'].sessions, 2);

  const w = await app.request('GET', '/api/v3/widget/process/live');
  t.same([w.body.current_sessions, w.body.total_sessions], [0, 2], 'the widget counts from the sessions plugin');
});

t.test('the default ignore list leaves loopback players uncounted and their playlists untouched', async (t) => {
  const app = await startApp(t, { config: { sessions: { session_timeout_sec: 3, max_sessions: 1 } } });
  await liveHls(app, 'quiet');
  const p1 = player(t, `${app.url}/memfs/quiet.m3u8`);
  const p2 = player(t, `${app.url}/memfs/quiet.m3u8`);
  const res = await fetch(`${app.url}/memfs/quiet.m3u8`);
  t.equal(res.status, 200, 'no limit applies to an ignored address');
  t.match(await res.text(), /#EXTINF/, 'the media playlist itself, not a session master');
  await waitFor(() => p1.frames() >= 20 && p2.frames() >= 20, { timeout: 30_000, what: 'both players play (max_sessions 1 does not apply)' });
  t.same(await active(app), []);
  t.equal((await summary(app)).summary.sessions, 0);
});
