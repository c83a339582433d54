import t from 'tap';
import { startApp, type TestApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { rtmpServiceRef, type RtmpService } from '../../../../plugins/rtmp/ref.ts';
import { state, waitState } from '../helpers.ts';
import { hlsProcess, ownFfmpegs, readFrames, rtmpProcess } from './helpers.ts';

/*
 * Demand readers and the sessions plugin (issue 34), with real ffmpeg: a new HLS viewer the
 * sessions limits refuse (509, as the reference) starts nothing, the same viewer admitted later
 * starts the process and is a session of the `hls` collector; a loopback viewer, whom the default
 * `sessions.ip_ignorelist` hides from the sessions, still starts it; an RTMP player refused before
 * the stream table (a wrong token) starts nothing either.
 */

const WAITING = '## on demand: waiting';

async function add(app: TestApp, body: Record<string, unknown>): Promise<void> {
  const r = await app.request('POST', '/api/v3/process', { body });
  if (r.status !== 200) throw new Error(`POST: ${r.status} ${r.text}`);
}

/** Waits until the process waits and its waiting playlist is up, read through the API (no demand). */
async function waitingUp(app: TestApp, id: string, path: string): Promise<void> {
  await waitState(app, id, (s) => s.ondemand?.waiting === true, 'waiting');
  await waitFor(async () => {
    const r = await app.request('GET', `/api/v3/fs/mem${path}`);
    return r.status === 200 && r.text.includes(WAITING);
  }, { what: `the waiting playlist ${path}`, timeout: 15_000 });
}

/** The session id of the one-line master the sessions plugin answers a new viewer with. */
function sessionOf(master: string): string {
  const m = /[?&]session=([A-Za-z0-9]+)/.exec(master);
  if (!m) throw new Error(`no session in ${master}`);
  return m[1]!;
}

/** HLS sessions the sessions plugin holds now. */
async function hlsSessions(app: TestApp): Promise<Array<{ reference: string }>> {
  const r = await app.request('GET', '/api/v3/session/active?collectors=hls');
  return r.body.hls;
}

/** A viewer that holds an `hls` session on a static playlist, fetching its segment until `stop`. */
async function holdSession(app: TestApp): Promise<{ stop(): Promise<void> }> {
  const put = (p: string, body: string) => app.request('PUT', `/api/v3/fs/mem${p}`, { raw: body, headers: { 'content-type': 'application/octet-stream' } });
  await put('/hold.m3u8', '#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\nhold_0.ts\n#EXT-X-ENDLIST\n');
  await put('/hold_0.ts', 'x'.repeat(188));
  const id = sessionOf(await (await fetch(`${app.url}/memfs/hold.m3u8`)).text());
  const registered = await fetch(`${app.url}/memfs/hold.m3u8?session=${id}`);
  await registered.text();
  if (registered.status !== 200) throw new Error(`the holder was refused: ${registered.status}`);
  let on = true;
  const loop = (async () => {
    while (on) {
      await (await fetch(`${app.url}/memfs/hold_0.ts?session=${id}`)).arrayBuffer();
      await new Promise((res) => setTimeout(res, 250));
    }
  })();
  await waitFor(async () => (await hlsSessions(app)).length === 1, { what: 'the holder active' });
  return { stop: async () => { on = false; await loop; } };
}

/**
 * Polls like a player (with its session) until ffmpeg's own playlist is served, then fetches its
 * first segment as a player does (which activates a session); ms from `t0` to the playlist.
 */
async function playUntilReal(app: TestApp, path: string, t0: number): Promise<number> {
  const playlist = await waitFor(async () => {
    const r = await fetch(`${app.url}${path}`);
    const text = await r.text();
    return r.status === 200 && !text.includes(WAITING) && text.includes('#EXTINF') ? text : undefined;
  }, { what: `ffmpeg's playlist at ${path}`, timeout: 20_000, interval: 1000 });
  const ms = performance.now() - t0;
  const seg = playlist.split('\n').find((l) => /\.ts(\?|$)/.test(l))!;
  const r = await fetch(new URL(seg, `${app.url}${path}`));
  await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`segment ${seg}: ${r.status}`);
  return ms;
}

t.test('a viewer the sessions limits refuse starts nothing; admitted, it starts the process and is a session', async (t) => {
  // an empty ignore list counts loopback (the test's clients) as the sessions plugin counts anyone
  const app = await startApp(t, { config: { sessions: { ip_ignorelist: [], max_sessions: 1, session_timeout_sec: 2 } } });
  await add(app, hlsProcess('lim', 'lim'));
  await waitingUp(app, 'lim', '/lim.m3u8');
  const holder = await holdSession(app);
  t.teardown(() => holder.stop());

  const refused = await fetch(`${app.url}/memfs/lim.m3u8`);
  const body = await refused.json() as { message: string; details: string[] };
  t.equal(refused.status, 509, 'a new viewer over max_sessions is refused');
  t.same([body.message, body.details], ['Bandwith limit exceeded', ['Number of sessions exceeded']], "the reference's refusal");
  // the hub would have been told at once (main's copy of the door sends synchronously): give it a second
  await new Promise((res) => setTimeout(res, 1200));
  const s = await state(app, 'lim');
  t.match(s.ondemand, { waiting: true }, 'the refused viewer did not start it');
  t.equal(s.exec, 'finished');
  t.same(ownFfmpegs('lim.m3u8'), [], 'no ffmpeg for it');

  // the holder leaves: its session ends after session_timeout_sec, a place is free
  await holder.stop();
  await waitFor(async () => (await hlsSessions(app)).length === 0, { what: 'the holder session closed', timeout: 15_000 });
  const t0 = performance.now();
  const admitted = await fetch(`${app.url}/memfs/lim.m3u8`);
  t.equal(admitted.status, 200, 'admitted now');
  const id = sessionOf(await admitted.text());
  const ms = await playUntilReal(app, `/memfs/lim.m3u8?session=${id}`, t0);
  t.ok(ms < 4000, `ffmpeg's playlist within 4 s of asking (${Math.round(ms)} ms)`);
  const running = await state(app, 'lim');
  t.match(running.ondemand, { waiting: false, started_by: 'hls' }, 'started by the admitted viewer');
  t.ok(running.ondemand.readers >= 1, 'counted as a reader');
  t.match(await hlsSessions(app), [{ reference: 'lim' }], 'and as a session of the hls collector');
  t.equal((await fetch(`${app.url}/memfs/lim.m3u8`)).status, 509, 'a second new viewer is refused while it watches');
});

t.test('a loopback viewer, hidden from the sessions by the default ignore list, starts the process', async (t) => {
  const app = await startApp(t, { config: { sessions: { max_sessions: 1 } } });
  await add(app, hlsProcess('loop', 'loop'));
  await waitingUp(app, 'loop', '/loop.m3u8');
  const t0 = performance.now();
  const first = await fetch(`${app.url}/memfs/loop.m3u8`);
  const text = await first.text();
  t.equal(first.status, 200);
  t.ok(text.includes(WAITING), 'the playlist is not rewritten for an ignored address: the waiting one itself');
  const ms = await playUntilReal(app, '/memfs/loop.m3u8', t0);
  t.ok(ms < 4000, `ffmpeg's playlist within 4 s of asking (${Math.round(ms)} ms)`);
  const s = await state(app, 'loop');
  t.match(s.ondemand, { waiting: false, started_by: 'hls' }, 'started by the loopback viewer');
  t.ok(s.ondemand.readers >= 1, 'counted as a reader of the process');
  t.same(await hlsSessions(app), [], 'not a session: the ignore list hides it from the sessions only');
  t.equal(ownFfmpegs('loop.m3u8').length, 1, 'one ffmpeg runs for it');
});

t.test('an RTMP player refused before the stream table (a wrong token) starts nothing', async (t) => {
  const app = await startApp(t, { config: { rtmp: { enable: true, address: '127.0.0.1:0', token: 'right-token' } } });
  const rtmp = app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService;
  await add(app, rtmpProcess('tok', 'tok'));
  await waitState(app, 'tok', (s) => s.ondemand?.waiting === true, 'waiting');
  const url = `rtmp://127.0.0.1:${rtmp.ports().rtmp}/tok`;
  const frames = await readFrames(`${url}?token=wrong`, 5, 10_000).catch(() => 0);
  t.equal(frames, 0, 'the player with a wrong token reads nothing');
  const s = await state(app, 'tok');
  t.match(s.ondemand, { waiting: true }, 'and did not start it');
  t.same(ownFfmpegs('/tok'), [], 'no ffmpeg for it');
  t.ok(await readFrames(`${url}?token=right-token`, 10) >= 10, 'a player with the token starts it and reads');
  t.match((await state(app, 'tok')).ondemand, { started_by: 'stream' });
});
