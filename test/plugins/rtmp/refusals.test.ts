import t from 'tap';
import { startRtmpApp, publish, play } from './helpers.ts';
import { waitFor } from '../../helpers/wait.ts';

const logText = async (app: { request: (m: string, p: string) => Promise<{ body: any }> }) =>
  JSON.stringify((await app.request('GET', '/api/v3/log')).body);

t.test('bad, missing and duplicate publishers are refused; their media never reaches a player', async (t) => {
  const app = await startRtmpApp(t, { token: 'good' });
  const first = publish(t, `${app.base}/live/one.stream?token=good`, { seconds: 120 });
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body.length === 1, { what: 'listed' });
  const p = play(t, `${app.base}/live/one.stream?token=good`);
  await waitFor(() => p.frames().length > 3, { what: 'player running' });

  // each intruder sends 320x240: a single such frame at the player would show the leak
  const bad = publish(t, `${app.base}/live/one.stream?token=bad`, { size: '320x240', seconds: 5 });
  const missing = publish(t, `${app.base}/live/one.stream?token=`, { size: '320x240', seconds: 5 });
  // no token query: the last element is the token (reference), so this is `/live` with token `one.stream`
  const noQuery = publish(t, `${app.base}/live/one.stream`, { size: '320x240', seconds: 5 });
  const dup = publish(t, `${app.base}/live/one.stream?token=good`, { size: '320x240', seconds: 5 });
  const suffixDup = publish(t, `${app.base}/live/one.stream/good`, { size: '320x240', seconds: 5 });
  for (const [name, f] of Object.entries({ bad, missing, noQuery, dup, suffixDup })) t.not(await f.done, 0, `${name} publisher refused`);

  const seen = p.frames().length;
  await waitFor(() => p.frames().length > seen + 10, { what: 'the first publisher keeps streaming' });
  t.equal(first.child.exitCode, null, 'the first publisher still runs');
  t.ok(p.frames().every((s) => s === '160x120'), `only the first publisher's frames (${new Set(p.frames()).size} sizes)`);
  t.same(app.rtmp.channels().map((c) => [c.name, c.players]), [['/live/one.stream', 1]]);

  const log = await logText(app);
  t.match(log, /rtmp publish refused: invalid token/);
  t.match(log, /rtmp publish refused: no token given/);
  t.match(log, /rtmp publish refused: already publishing/);
  t.notMatch(log, /good/, 'the token never reaches the log');
});

t.test('players with a bad or missing token are refused', async (t) => {
  const app = await startRtmpApp(t, { token: 'good' });
  publish(t, `${app.base}/live/p?token=good`);
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body.length === 1, { what: 'listed' });
  t.not(await play(t, `${app.base}/live/p?token=bad`).done, 0);
  t.not(await play(t, `${app.base}/live/p`).done, 0, 'the last element is taken as the token: /live + "p"');
  t.match(await logText(app), /rtmp play refused: invalid token/);
  t.equal(app.rtmp.channels()[0]!.players, 0);
});

t.test('publishing outside rtmp.app is refused; playing is not checked against the app', async (t) => {
  const app = await startRtmpApp(t, { app: '/live' });
  t.not(await publish(t, `${app.base}/other/x`, { seconds: 3 }).done, 0);
  t.match(await logText(app), /rtmp publish refused: the stream path must start with the app \/live/);
  publish(t, `${app.base}/live/x`);
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body.length === 1, { what: 'listed' });
  t.equal(await play(t, `${app.base}/live/x`, { frames: 3 }).done, 0);
});

t.test('every refusal is one log line under the stream the client asked for, with the reason', async (t) => {
  const app = await startRtmpApp(t, { token: 'good', app: '/live' });
  const cases: Array<[string, 'publish' | 'play', string, RegExp]> = [
    [`${app.base}/live/asked1.stream`, 'publish', '/live/asked1.stream', /rtmp publish refused: no token given/],
    [`${app.base}/live/asked2.stream?token=bad`, 'publish', '/live/asked2.stream', /rtmp publish refused: invalid token/],
    [`${app.base}/other/asked3.stream?token=good`, 'publish', '/other/asked3.stream', /rtmp publish refused: the stream path must start with the app \/live/],
    [`${app.base}/asked4.stream`, 'publish', '/asked4.stream', /rtmp publish refused: no token given/],
    [`${app.base}/live/asked5.stream?token=good`, 'play', '/live/asked5.stream', /rtmp play refused: stream not found/],
    [`${app.base}/live/asked6.stream?token=`, 'play', '/live/asked6.stream', /rtmp play refused: no token given/],
  ];
  for (const [url, mode, stream, reason] of cases) {
    const f = mode === 'publish' ? publish(t, url, { seconds: 3 }) : play(t, url);
    t.not(await f.done, 0, `${url} refused`);
    const lines = ((await app.request('GET', '/api/v3/log')).body as string[]).filter((l) => l.includes(`stream="${stream}"`));
    t.equal(lines.length, 1, `one line for ${stream}`);
    t.match(lines[0] ?? '', reason, `... with the reason`);
  }
  const log = (await app.request('GET', '/api/v3/log')).body as string[];
  t.notOk(log.some((l) => l.includes('refused') && l.includes('stream="/live"')), 'never under the app alone');
});
