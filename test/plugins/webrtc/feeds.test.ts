import t from 'tap';
import { childPids } from '../../helpers/net-proc.ts';
import { waitFor } from '../../helpers/wait.ts';
import { state, waitState } from '../../core/process/helpers.ts';
import { rtmpProcess } from '../../core/process/ondemand/helpers.ts';
import { ffmpeg } from '../srt/srt-helpers.ts';
import { ndcViewer, type NdcViewer, playingViewer, SOURCE, startWebrtcApp, withMedia } from './helpers.ts';

/*
 * WHEP viewers without a browser (node-datachannel peers that make the offer): the feed of a
 * stream is shared and starts at a keyframe, a stream without sound plays video only, a viewer
 * starts an on-demand process (issue 34), and a crash of the WebRTC host
 * ends WebRTC sessions only: the service goes on and the next viewer plays.
 */

const received = (v: { video: number; audio: number }, video: number, audio: number) => v.video >= video && v.audio >= audio;

t.test('two viewers share one feed, each starts at a keyframe; the feed ends after the last leaves', async (t) => {
  const app = await startWebrtcApp(t, {}, { sessions: { ip_ignorelist: [] } });
  ffmpeg(t, [...SOURCE, '-f', 'flv', `${app.rtmpBase}/live/two`], 120_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body?.length === 1, { timeout: 30_000, what: 'RTMP publisher' });
  const made = [await ndcViewer(t, app.url, 'live/two'), await ndcViewer(t, app.url, 'live/two')];
  t.same(made.map((v) => v.status), [201, 201]);
  const [a, b] = await withMedia(t, app.url, 'live/two', made, 100) as [NdcViewer, NdcViewer];
  await waitFor(() => received(a, 100, 50) && received(b, 100, 50), { timeout: 30_000, what: 'video and audio at both viewers' });
  t.ok(a.keyframeFirst && b.keyframeFirst, 'each viewer\'s first video packet starts a keyframe');
  t.equal(feedPids().length, 1, 'one feed ffmpeg for both');
  await app.request('DELETE', a.session!, { headers: { authorization: 'Bearer web-rtc-token' } });
  b.close();
  await waitFor(async () => (await app.request('GET', '/api/v3/webrtc')).body.length === 1, { what: 'the deleted session ended at once' });
  // the other went without a word: ICE consent freshness ends it
  const gone = performance.now();
  await waitFor(async () => (await app.request('GET', '/api/v3/webrtc')).body.length === 0, { timeout: 60_000, what: 'the vanished viewer ended' });
  t.pass(`the vanished viewer ended after ${Math.round(performance.now() - gone)} ms`);
  await waitFor(() => feedPids().length === 0, { timeout: 20_000, what: 'the feed ffmpeg ended (10 s after the last viewer)' });
});

t.test('a WHEP viewer starts an on-demand process; video only when the stream has no sound', async (t) => {
  const app = await startWebrtcApp(t);
  const r = await app.request('POST', '/api/v3/process', { body: rtmpProcess('cam', 'live/cam') });
  t.equal(r.status, 200);
  await waitState(app, 'cam', (s) => s.ondemand?.waiting === true, 'waiting');
  const first = await ndcViewer(t, app.url, 'live/cam');
  t.equal(first.status, 201, 'answered once the process published');
  t.match((await state(app, 'cam')).ondemand, { started_by: 'stream' }, 'started for the stream');
  const [v] = await withMedia(t, app.url, 'live/cam', [first], 50) as [NdcViewer];
  t.equal(v.audio, 0, 'no audio track content: the stream has none');
  v.close();
  await waitState(app, 'cam', (s) => s.ondemand?.waiting === true && s.exec === 'finished', 'waiting again after the viewer left', 40_000);
});

t.test('viewers that close their peers while media flows end alone: the host goes on', async (t) => {
  const app = await startWebrtcApp(t);
  ffmpeg(t, [...SOURCE, '-f', 'flv', `${app.rtmpBase}/live/leave`], 120_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body?.length === 1, { timeout: 30_000, what: 'RTMP publisher' });
  const host = await waitFor(() => hostPid(), { what: 'the host' });
  // a viewer that libdatachannel's offerer race failed five times (ndc-viewer.ts) is left out
  const made = await Promise.allSettled(Array.from({ length: 5 }, () => ndcViewer(t, app.url, 'live/leave')));
  let viewers = made.flatMap((m) => (m.status === 'fulfilled' && m.value.status === 201 ? [m.value] : []));
  t.ok(viewers.length >= 3, `${viewers.length} of 5 viewers connected`);
  viewers = await withMedia(t, app.url, 'live/leave', viewers, 10);
  // their tracks close in the host while their sessions live on (until ICE consent fails): a packet
  // to a closed track threw out of the host's fan-out ("Track is closed") and the host crashed
  for (const v of viewers) v.leave();
  const until = Date.now() + 5000;
  await waitFor(() => hostPid() !== host || Date.now() > until, { timeout: 10_000, interval: 250, what: '5 s of media to closed tracks' });
  await playingViewer(t, app.url, 'live/leave', 10);
  t.equal(hostPid(), host, 'the same host process throughout');
});

t.test('a crash of the WebRTC host ends its sessions only; it comes back and the next viewer plays', async (t) => {
  const app = await startWebrtcApp(t);
  ffmpeg(t, [...SOURCE, '-f', 'flv', `${app.rtmpBase}/live/crash`], 120_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body?.length === 1, { timeout: 30_000, what: 'RTMP publisher' });
  await playingViewer(t, app.url, 'live/crash', 25);
  const pid = await waitFor(async () => ((await app.request('GET', '/api/v3/webrtc')).body.length === 1 ? hostPid() : undefined), { what: 'the host pid' });
  process.kill(pid, 'SIGKILL');
  await waitFor(async () => (await app.request('GET', '/api/v3/webrtc')).body.length === 0, { what: 'its sessions ended' });
  t.equal((await app.request('GET', '/api/v3/rtmp')).status, 200, 'the service goes on');
  await waitFor(() => hostPid() !== undefined && hostPid() !== pid, { what: 'a new host' });
  const next = await waitFor(async () => { const n = await ndcViewer(t, app.url, 'live/crash'); return n.status === 201 ? n : (n.close(), undefined); }, { what: 'a viewer answered by the new host' });
  await withMedia(t, app.url, 'live/crash', [next], 25);
  t.pass('video through the new host');
});

/** The WebRTC host process. */
const hostPid = (): number | undefined => childPids((cmd) => cmd.includes('webrtc/host/entry'))[0];
/** The feed ffmpegs (they send RTP to the host on loopback). */
const feedPids = (): number[] => childPids((cmd) => cmd.includes('rtp://127.0.0.1'));
