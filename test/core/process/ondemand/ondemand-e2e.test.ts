import t from 'tap';
import { startApp, type TestApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { rtmpServiceRef, type RtmpService } from '../../../../plugins/rtmp/ref.ts';
import { ffmpegPids, state, waitState } from '../helpers.ts';
import { hlsProcess, probeStreams, readFrames, rtmpProcess } from './helpers.ts';

/*
 * On-demand processes with real ffmpeg on the real service (issue 34): a viewer polling a
 * playlist like a player starts an HLS process and gets ffmpeg's playlist within 4 s, a segment
 * ffprobe reads; the process stops 3 s (its idle_seconds) after the viewer left and waits
 * again; an RTMP player starts a process that publishes to the stream table and reads frames.
 */

const WAITING = '## on demand: waiting';

async function add(app: TestApp, body: Record<string, unknown>): Promise<void> {
  const r = await app.request('POST', '/api/v3/process', { body });
  if (r.status !== 200) throw new Error(`POST: ${r.status} ${r.text}`);
}

/** Polls the playlist every second, as a player does, until ffmpeg's own is served; ms until then. */
async function playUntilReal(app: TestApp, path: string): Promise<{ ms: number; playlist: string; waitingSeen: boolean }> {
  const t0 = performance.now();
  let waitingSeen = false;
  for (;;) {
    const r = await fetch(`${app.url}${path}`);
    const text = await r.text();
    if (r.status === 200 && !text.includes(WAITING) && text.includes('#EXTINF')) return { ms: performance.now() - t0, playlist: text, waitingSeen };
    if (r.status === 200 && text.includes(WAITING)) waitingSeen = true;
    if (performance.now() - t0 > 20_000) throw new Error(`no real playlist at ${path} within 20 s (last: ${r.status} ${text.slice(0, 120)})`);
    await new Promise((res) => setTimeout(res, 1000));
  }
}

t.test('a viewer starts an on-demand HLS process and gets a real playlist within 4 s; it stops after the viewer left', async (t) => {
  const app = await startApp(t);
  await add(app, hlsProcess('cam1', 'cam1'));
  const waiting = await waitState(app, 'cam1', (s) => s.ondemand?.waiting === true, 'waiting');
  t.equal(waiting.exec, 'finished', 'it does not run before anyone asks');
  t.same(ffmpegPids('cam1.m3u8'), [], 'no ffmpeg runs for it');
  // the waiting playlist is up (it lists the slate clip), so a player has something to show
  const first = await waitFor(async () => {
    const r = await fetch(`${app.url}/memfs/cam1.m3u8`);
    const text = await r.text();
    return r.status === 200 && text.includes(WAITING) ? text : undefined;
  }, { what: 'the waiting playlist', timeout: 15_000 });
  const slate = first.split('\n').find((l) => l.endsWith('.ts') || l.includes('.ts?'))!;
  t.match(slate, /cam1\.ondemand-slate\.ts/, 'it lists the slate clip');
  // the request above asked: it started the process
  const { ms, playlist, waitingSeen } = await playUntilReal(app, '/memfs/cam1.m3u8');
  t.ok(waitingSeen || ms < 1000, 'the first answers show the waiting playlist');
  t.ok(ms < 4000, `ffmpeg's playlist within 4 s of asking (${Math.round(ms)} ms)`);
  const running = await state(app, 'cam1');
  t.match(running.ondemand, { waiting: false, started_by: 'hls' }, 'the state says why it runs');
  t.ok(running.ondemand.readers >= 1, 'one viewer counted');
  const seg = playlist.split('\n').find((l) => l.endsWith('.ts'))!;
  t.match(seg, /^cam1_\d+\.ts$/);
  t.ok((await probeStreams(`${app.url}/memfs/${seg}`)).includes('video'), 'ffprobe reads a segment');
  // the viewer leaves: 3 s idle, then it stops and waits again
  const left = performance.now();
  const back = await waitState(app, 'cam1', (s) => s.ondemand?.waiting === true && s.exec === 'finished', 'waiting again', 20_000);
  const idleMs = performance.now() - left;
  t.ok(idleMs >= 1500 && idleMs < 9000, `stopped ${Math.round(idleMs)} ms after the last request (idle 3 s)`);
  t.equal(back.order, 'start', 'the order stays start');
  await waitFor(() => ffmpegPids('cam1.m3u8').length === 0, { what: 'ffmpeg gone' });
  // read through the API, which is no viewer: a viewer's GET would start it again, and the ffmpeg
  // stopped below could then leave its own final playlist in place of the waiting one
  const again = (await app.request('GET', '/api/v3/fs/mem/cam1.m3u8')).text;
  t.ok(again.includes(WAITING), 'the waiting playlist is back');
  await app.request('PUT', '/api/v3/process/cam1/command', { body: { command: 'stop' } });
  const stopped = await state(app, 'cam1');
  t.match(stopped.ondemand, { waiting: false }, 'order stop: it no longer waits');
  await waitFor(async () => (await fetch(`${app.url}/memfs/cam1.m3u8`)).status === 404, { what: 'the waiting playlist removed' });
  await fetch(`${app.url}/memfs/cam1.m3u8`);
  await new Promise((res) => setTimeout(res, 500));
  t.notOk(['starting', 'running'].includes((await state(app, 'cam1')).exec), 'a stopped process is never started by demand');
  t.same(ffmpegPids('cam1.m3u8'), [], 'no ffmpeg');
});

t.test('a process that is not on demand is never started or stopped by demand', async (t) => {
  const app = await startApp(t);
  await add(app, hlsProcess('plain', 'plain', { ondemand: undefined, autostart: false }));
  await fetch(`${app.url}/memfs/plain.m3u8`);
  const s = await state(app, 'plain');
  t.equal(s.exec, 'finished');
  t.equal(s.ondemand, undefined, 'no ondemand state');
});

t.test('an RTMP player starts an on-demand process that publishes to the stream table', async (t) => {
  const app = await startApp(t, { config: { rtmp: { enable: true, address: '127.0.0.1:0' } } });
  const rtmp = app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService;
  await add(app, rtmpProcess('cam2', 'cam2'));
  await waitState(app, 'cam2', (s) => s.ondemand?.waiting === true, 'waiting');
  const frames = await readFrames(`rtmp://127.0.0.1:${rtmp.ports().rtmp}/cam2`, 25);
  t.ok(frames >= 25, `the player read ${frames} frames`);
  const s = await state(app, 'cam2');
  t.match(s.ondemand, { started_by: 'stream' }, 'started for the stream');
  await waitState(app, 'cam2', (x) => x.ondemand?.waiting === true && x.exec === 'finished', 'waiting again after the player left', 20_000);
  const none = await fetch(`${app.url}/api/v3/process/cam2/state`);
  t.equal(none.status, 200);
});
