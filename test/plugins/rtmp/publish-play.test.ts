import t from 'tap';
import { startRtmpApp, publish, play } from './helpers.ts';
import { waitFor } from '../../helpers/wait.ts';

const listed = async (app: { request: (m: string, p: string) => Promise<{ body: any }> }) =>
  ((await app.request('GET', '/api/v3/rtmp')).body as { name: string }[]).map((c) => c.name).sort();

t.test('publish with the token, list it, play it back (query token), decode frames', async (t) => {
  const app = await startRtmpApp(t, { token: 'se cret' });
  const pub = publish(t, `${app.base}/live/abc.stream?token=se%20cret`, { seconds: 60 });
  await waitFor(async () => (await listed(app)).length === 1, { what: 'listed' });
  t.same(await listed(app), ['/live/abc.stream'], 'the channel key has no token');
  const p = play(t, `${app.base}/live/abc.stream?token=se%20cret`, { frames: 15 });
  t.equal(await p.done, 0, p.stderr().slice(-1000));
  t.ok(p.frames().length >= 15 && p.frames().every((s) => s === '160x120'), `decoded ${p.frames().length} frames`);
  t.match(p.stderr(), /Video: h264/);
  t.match(p.stderr(), /Audio: aac/);
  const ch = app.rtmp.channels()[0]!;
  t.equal(ch.videoCodec, 7, 'h264');
  t.equal(ch.audioCodec, 10, 'aac');
  t.equal(pub.child.exitCode, null, 'the publisher still streams');
});

t.test('the token as the last path element; nested app paths', async (t) => {
  const app = await startRtmpApp(t, { token: 'tok' });
  publish(t, `${app.base}/live/x.stream/tok`);
  publish(t, `${app.base}/a/b/c.stream?token=tok`);
  await waitFor(async () => (await listed(app)).length === 2, { what: 'both listed' });
  t.same(await listed(app), ['/a/b/c.stream', '/live/x.stream']);
  const p1 = play(t, `${app.base}/live/x.stream/tok`, { frames: 5 });
  const p2 = play(t, `${app.base}/a/b/c.stream?token=tok`, { frames: 5 });
  t.equal(await p1.done, 0, p1.stderr().slice(-800));
  t.equal(await p2.done, 0, p2.stderr().slice(-800));
});

t.test('a player starts on a keyframe at once from the GOP cache', async (t) => {
  const app = await startRtmpApp(t);
  // one keyframe every 5 s: without the cache a late player would wait for the next one
  publish(t, `${app.base}/live/gop`, { extra: ['-g', '50'] });
  await waitFor(async () => (await listed(app)).length === 1, { what: 'listed' });
  const p = play(t, `${app.base}/live/gop`, { frames: 1, extra: ['-analyzeduration', '0'] });
  t.equal(await p.done, 0);
  t.equal(p.keyFirst(), true, 'the first decoded frame is a keyframe');
  t.notMatch(p.stderr(), /non-existing PPS|no frame!/, 'no broken frames before it');
});

t.test('the publisher stops: players are told at once, the stream is unlisted, the name is free again', async (t) => {
  const app = await startRtmpApp(t);
  const pub = publish(t, `${app.base}/live/end.stream`, { seconds: 60 });
  await waitFor(async () => (await listed(app)).length === 1, { what: 'listed' });
  const p = play(t, `${app.base}/live/end.stream`);
  await waitFor(() => p.frames().length > 3, { what: 'player running' });
  pub.child.kill('SIGKILL');
  const stopped = Date.now();
  await pub.done;
  // no read timeout on the player: it ends only because the server tells it
  const code = await p.done;
  t.equal(code, 0, `the player ended cleanly ${Date.now() - stopped} ms after the publisher was killed`);
  t.same(await listed(app), [], 'unlisted at once, no grace period');
  const again = publish(t, `${app.base}/live/end.stream`);
  await waitFor(async () => (await listed(app)).length === 1, { what: 'published again' });
  t.equal(again.child.exitCode, null);
});

t.test('play of a stream nobody publishes is refused', async (t) => {
  const app = await startRtmpApp(t);
  const p = play(t, `${app.base}/live/nothing`);
  t.not(await p.done, 0);
  const log = JSON.stringify((await app.request('GET', '/api/v3/log')).body);
  t.match(log, /rtmp play refused: stream not found/);
});
