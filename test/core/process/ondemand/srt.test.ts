import t from 'tap';
import type { TestApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { rtmpServiceRef, type RtmpService } from '../../../../plugins/rtmp/ref.ts';
import { srtCaller, srtUrl, startSrtApp, TOKEN } from '../../../plugins/srt/srt-helpers.ts';
import { ffmpegPids, state, waitState } from '../helpers.ts';
import { LAVFI_IN, readFrames, rtmpProcess } from './helpers.ts';

/*
 * SRT players of on-demand processes (issue 34), with real ffmpeg: the SRT handshake admits a
 * request for a name an on-demand process would publish, the service starts the process and
 * attaches the reader once its stream is live (over SRT or RTMP), the process stops after the
 * player left and the name is admitted again; names nothing publishes are still refused early; a
 * player over the on-demand budget (`encoder.ondemand`, issue 43) starts nothing.
 */

async function add(app: TestApp, body: Record<string, unknown>): Promise<void> {
  const r = await app.request('POST', '/api/v3/process', { body });
  if (r.status !== 200) throw new Error(`POST: ${r.status} ${r.text}`);
}

/** An on-demand process publishing MPEG-TS through the `{srt}` placeholder as `name`. */
function srtProcess(id: string, name: string): Record<string, unknown> {
  return {
    id,
    input: [LAVFI_IN],
    output: [{ id: 'out', address: `{srt,name=${name},latency=200000}`, options: ['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '25', '-f', 'mpegts'] }],
    autostart: true,
    ondemand: { enable: true, idle_seconds: 3 },
  };
}

/** ffmpeg reading `name` as an SRT player (request mode, the default) until it decoded `frames` frames. */
const play = (app: TestApp & { srtPort: number }, name: string, frames: number): Promise<number> =>
  readFrames(srtUrl(app.srtPort, `${name},token:${encodeURIComponent(TOKEN)}`), frames, 30_000);

t.test('an SRT player starts an on-demand process that publishes over SRT, and reads it', async (t) => {
  const app = await startSrtApp(t);
  await add(app, srtProcess('cam3', 'cam3'));
  await waitState(app, 'cam3', (s) => s.ondemand?.waiting === true, 'waiting');
  t.same(ffmpegPids('streamid=cam3,mode:publish'), [], 'no ffmpeg runs before a player asks');
  const t0 = performance.now();
  const frames = await play(app, 'cam3', 25);
  t.ok(frames >= 25, `the SRT player read ${frames} frames (${Math.round(performance.now() - t0)} ms)`);
  const s = await state(app, 'cam3');
  t.match(s.ondemand, { started_by: 'stream' }, 'started for the stream');
  await waitState(app, 'cam3', (x) => x.ondemand?.waiting === true && x.exec === 'finished', 'waiting again after the player left', 25_000);
  await waitFor(() => ffmpegPids('streamid=cam3,mode:publish').length === 0, { what: 'its ffmpeg gone' });
  // waiting again: the next player starts it again (the name is admitted once more)
  t.ok(await play(app, 'cam3', 10) >= 10, 'a second player starts it again');
  t.throws(() => srtCaller(app.srtPort, `nothing,token:${TOKEN}`), { reject: 1404 } as never, 'a name nothing publishes is still refused in the handshake');
});

t.test('a second SRT player joins the run the first one started', async (t) => {
  const app = await startSrtApp(t);
  await add(app, srtProcess('cam5', 'cam5'));
  await waitState(app, 'cam5', (s) => s.ondemand?.waiting === true, 'waiting');
  const first = play(app, 'cam5', 100);
  // once the stream is live (the process's SRT publisher is in the listing) a second player joins it
  await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body.publisher.cam5 !== undefined, { timeout: 30_000, what: 'cam5 published' });
  const second = await play(app, 'cam5', 15);
  t.ok(second >= 15, `the second player read ${second} frames`);
  t.equal(ffmpegPids('streamid=cam5,mode:publish').length, 1, 'one ffmpeg publishes for both');
  t.ok(await first >= 100, 'the first player read on');
});

t.test('a second SRT player that comes while the process starts is admitted and waits as the first does', async (t) => {
  const app = await startSrtApp(t);
  await add(app, srtProcess('cam7', 'cam7'));
  await waitState(app, 'cam7', (s) => s.ondemand?.waiting === true, 'waiting');
  const first = play(app, 'cam7', 50);
  // the demand started it (no longer waiting) and its stream is not live yet: the start window
  await waitState(app, 'cam7', (s) => s.ondemand?.waiting === false, 'started by the first player');
  // on this machine the process takes seconds to publish; should it be live already, the second
  // player simply joins (the case the previous test shows)
  if ((await app.request('GET', '/api/v3/srt')).body.publisher.cam7 !== undefined) t.comment('published before the second player came');
  const second = await play(app, 'cam7', 15);
  t.ok(second >= 15, `the second player, admitted while the process started, read ${second} frames`);
  t.ok(await first >= 50, 'and the first read on');
  t.throws(() => srtCaller(app.srtPort, `cam7,mode:publish,token:${TOKEN}`), { reject: 1409 } as never, 'a stranger cannot publish the name once it is live');
});

t.test('an SRT player starts an on-demand process that publishes over RTMP', async (t) => {
  const app = await startSrtApp(t, {}, { rtmp: { enable: true, address: '127.0.0.1:0' } });
  const rtmp = app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService;
  t.ok(rtmp.ports().rtmp > 0, 'RTMP listens');
  await add(app, rtmpProcess('cam4', 'cam4'));
  await waitState(app, 'cam4', (s) => s.ondemand?.waiting === true, 'waiting');
  const frames = await play(app, 'cam4', 25);
  t.ok(frames >= 25, `the SRT player read ${frames} frames of the RTMP stream`);
  t.match((await state(app, 'cam4')).ondemand, { started_by: 'stream' }, 'started for the stream');
  await waitState(app, 'cam4', (x) => x.ondemand?.waiting === true && x.exec === 'finished', 'waiting again after the player left', 25_000);
});

t.test('an on-demand process that is stopped does not admit SRT players', async (t) => {
  const app = await startSrtApp(t);
  await add(app, srtProcess('cam6', 'cam6'));
  await waitState(app, 'cam6', (s) => s.ondemand?.waiting === true, 'waiting');
  await app.request('PUT', '/api/v3/process/cam6/command', { body: { command: 'stop' } });
  await waitState(app, 'cam6', (s) => s.ondemand?.waiting === false, 'not waiting');
  await waitFor(() => {
    try {
      srtCaller(app.srtPort, `cam6,token:${TOKEN}`).stop();
      return undefined;
    } catch (err) {
      return (err as { reject?: number }).reject === 1404 ? true : undefined;
    }
  }, { what: 'the name refused in the handshake' });
  t.pass('refused as not found');
  t.notOk(['starting', 'running'].includes((await state(app, 'cam6')).exec), 'not started');
});

t.test('an SRT player over the on-demand budget is closed as for a name nothing publishes, and starts nothing', async (t) => {
  const app = await startSrtApp(t, {}, { encoder: { ondemand: { max_starts_per_client: 1, max_running: 0 } } });
  await add(app, srtProcess('cam7', 'cam7'));
  await add(app, srtProcess('cam8', 'cam8'));
  await waitState(app, 'cam7', (s) => s.ondemand?.waiting === true, 'waiting');
  await waitState(app, 'cam8', (s) => s.ondemand?.waiting === true, 'waiting');
  t.ok(await play(app, 'cam7', 10) >= 10, 'the first player starts its process (this address\'s one start)');
  const second = await readFrames(srtUrl(app.srtPort, `cam8,token:${encodeURIComponent(TOKEN)}`), 10, 8000).then((n) => n, () => -1);
  t.ok(second <= 0, `the second player reads nothing (${second})`);
  const s = await state(app, 'cam8');
  t.match({ waiting: s.ondemand.waiting, exec: s.exec }, { waiting: true, exec: 'finished' }, 'its process still waits');
  t.same(ffmpegPids('streamid=cam8,mode:publish'), [], 'no ffmpeg for it');
});
