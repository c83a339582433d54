import t from 'tap';
import { startRtmpApp, publish, play } from './helpers.ts';
import { waitFor } from '../../helpers/wait.ts';
import { RawRtmp, session } from './wire-kit.ts';

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

/** A raw client's publish or play of `name` in app `live`: what it heard before the server closed (or 10 s). */
async function heard(port: number, name: string, mode: 'publish' | 'play', wait: string): Promise<{ got: boolean; start: boolean; closed: boolean; raw: RawRtmp }> {
  const raw = await RawRtmp.open(port);
  await raw.handshake();
  raw.write(session(port, 'live', name, mode));
  const got = await Promise.race([raw.waitText(wait), new Promise<boolean>((r) => setTimeout(() => r(false), 10_000))]);
  await Promise.race([raw.closed, new Promise((r) => setTimeout(r, 5_000))]);
  const start = await Promise.race([raw.waitText(mode === 'publish' ? 'NetStream.Publish.Start' : 'NetStream.Play.Start'), Promise.resolve(false)]);
  return { got, start, closed: raw.isClosed, raw };
}

t.test('a refused publisher or player hears an error status, never a success, then the connection ends', async (t) => {
  const app = await startRtmpApp(t);
  const ok = await RawRtmp.open(app.rtmp.ports().rtmp);
  t.teardown(() => ok.close());
  await ok.handshake();
  ok.write(session(app.rtmp.ports().rtmp, 'live', 'busy', 'publish'));
  t.ok(await ok.waitText('NetStream.Publish.Start'), 'an admitted publisher hears its start');
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body.length === 1, { what: 'listed' });

  const dup = await heard(app.rtmp.ports().rtmp, 'busy', 'publish', 'NetStream.Publish.BadName');
  t.ok(dup.got, 'a second publisher of a busy name hears NetStream.Publish.BadName');
  t.notOk(dup.start, '... and no NetStream.Publish.Start');
  t.ok(dup.closed, '... and the connection ends');
  const bad = await heard(app.rtmp.ports().rtmp, 'a\u0001b', 'publish', 'NetStream.Publish.BadName');
  t.ok(bad.got && !bad.start && bad.closed, 'a name the checks refuse: the same');
  const missing = await heard(app.rtmp.ports().rtmp, 'nothing-here', 'play', 'NetStream.Play.StreamNotFound');
  t.ok(missing.got, 'a player of a name nothing publishes hears NetStream.Play.StreamNotFound');
  t.notOk(missing.start, '... and no NetStream.Play.Start');
  t.ok(missing.closed);
  t.equal(app.rtmp.channels().length, 1, 'the first publisher still publishes');

  // ffmpeg reports the server's refusal and its reason instead of a broken pipe
  const f = publish(t, `${app.base}/live/busy`, { seconds: 5 });
  t.not(await f.done, 0);
  t.match(f.stderr(), /already publishing/, 'ffmpeg prints the reason');
});
