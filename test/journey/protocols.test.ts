import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { launchChromium, noBrowser } from '../helpers/browser.ts';
import { SseClient } from '../plugins/events/sse-client.ts';
import { ndcViewer, withMedia } from '../plugins/webrtc/helpers.ts';
import { llhlsUrl, rtmpUrl, SOURCE, srtUrl, startJourney, tracks, tracksOnceLive, waitFor, WEBRTC_TOKEN, type Journey } from './kit.ts';

/*
 * Issue 44.6 and 44.2: on one service with every plugin on (auth, tokens on RTMP, SRT and WebRTC,
 * an SRT passphrase), a stream published over RTMP, over SRT and over WHIP is read over every
 * other protocol, and each reader sees the tracks as the publisher sent them: video #0, audio #1
 * (ffprobe), which is what restreamer-ui's egress processes map with `-map 0:0`/`-map 0:1`.
 * WHEP viewers (node-datachannel) get video and audio of each. The WHIP publisher is Chromium
 * (fake camera and microphone): skipped, saying why, where it is not installed. Each is also
 * played as LL-HLS (plugin `llhls`, with its token). A stream published as `abr/cam` meets the kit's
 * pattern ladder (plugin `ladders`, issue 48): its multivariant playlist starts the ladder's one
 * ffmpeg (which reads and publishes with the run's RTMP credential) and lists the renditions.
 */

const BOTH = ['video', 'audio'];

/** A publisher of the test source over RTMP (`flv`) or SRT (`mpegts`), killed at teardown. */
function publisher(t: Test, url: string, format: 'flv' | 'mpegts'): void {
  const child = spawn('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', ...SOURCE, '-t', '120', '-f', format, url], { stdio: 'ignore' });
  t.teardown(() => { child.kill('SIGKILL'); });
}

async function listed(j: Journey, name: string): Promise<void> {
  await waitFor(async () => {
    const rtmp = (await j.run.req('GET', '/api/v3/rtmp')).body as { name: string }[];
    const srt = (await j.run.req('GET', '/api/v3/srt')).body as { publisher: Record<string, unknown> };
    return rtmp.some((s) => s.name === `/${name}`) || name in srt.publisher;
  }, { timeout: 40_000, what: `${name} published` });
}

/**
 * A WHEP viewer gets video and audio of `name`. A viewer whose connection never carried media (ICE
 * or DTLS lost on a box busy with the other suites) is made again once, as a player reconnects;
 * what the first got is printed.
 */
async function whep(t: Test, j: Journey, name: string): Promise<void> {
  const first = await ndcViewer(t, j.run.url, name, WEBRTC_TOKEN);
  t.equal(first.status, 201, `WHEP ${name}: 201 with the answer`);
  const [viewer] = await withMedia(t, j.run.url, name, [first], 20, WEBRTC_TOKEN, 20);
  viewer!.close();
  t.pass(`a WHEP viewer of ${name} gets video and audio`);
}

t.test('published over RTMP, SRT and WHIP, read over every protocol: video #0, audio #1', async (t) => {
  const j = await startJourney(t);
  const top = t; // the publishers stay until the end, for the sessions and events step

  await t.test('published over RTMP (with its token)', async (t) => {
    publisher(top, rtmpUrl(j, 'live/by-rtmp'), 'flv');
    await listed(j, 'live/by-rtmp');
    t.same(await tracksOnceLive(t, srtUrl(j, 'live/by-rtmp')), BOTH, 'read over SRT');
    t.same(await tracks(t, rtmpUrl(j, 'live/by-rtmp')), BOTH, 'read over RTMP (a late reader)');
    t.same(await tracks(t, llhlsUrl(j, 'live/by-rtmp')), BOTH, 'read over LL-HLS (its token)');
    t.equal((await fetch(llhlsUrl(j, 'live/by-rtmp').replace(/\?.*/, ''))).status, 401, 'LL-HLS without the token: 401');
    await whep(t, j, 'live/by-rtmp');
  });

  await t.test('a ladder (abr/*, with RTMP\'s token): renditions over LL-HLS, the multivariant playlist', async (t) => {
    publisher(top, rtmpUrl(j, 'abr/cam'), 'flv');
    await listed(j, 'abr/cam');
    const master = await waitFor(async () => {
      const r = await fetch(llhlsUrl(j, 'abr/cam', 'master.m3u8'));
      const text = await r.text();
      return r.status === 200 && text.includes('240p/index.m3u8') && text.includes('audio/index.m3u8') ? text : undefined;
    }, { timeout: 60_000, what: 'the multivariant playlist with both renditions (the ladder started on demand)' });
    t.match(master, /#EXT-X-STREAM-INF:BANDWIDTH=\d+,AVERAGE-BANDWIDTH=\d+,CODECS="avc1\.[0-9a-f]{6},mp4a\.40\.2",RESOLUTION=160x120/, 'the 240p rendition with its codecs and size (the source is 160x120: never scaled up)');
    t.match(master, /CODECS="mp4a\.40\.2"\naudio\/index\.m3u8/, 'the audio rendition');
    t.same(await tracks(t, llhlsUrl(j, 'abr/cam/240p')), BOTH, 'the 240p rendition read over LL-HLS');
    t.same(await tracks(t, rtmpUrl(j, 'abr/cam/240p')), BOTH, 'and over RTMP');
    const state = (await j.run.req('GET', '/api/v3/process/ladder:abr_cam/state')).body as { exec: string };
    t.equal(state.exec, 'running', 'one ladder process, started by its readers');
  });

  await t.test('published over SRT (token and passphrase)', async (t) => {
    publisher(top, srtUrl(j, 'live/by-srt', 'publish'), 'mpegts');
    await listed(j, 'live/by-srt');
    t.same(await tracksOnceLive(t, rtmpUrl(j, 'live/by-srt')), BOTH, 'read over RTMP');
    t.same(await tracks(t, srtUrl(j, 'live/by-srt')), BOTH, 'read over SRT');
    t.same(await tracks(t, rtmpUrl(j, 'live/by-srt')), BOTH, 'read over RTMP again (a late reader)');
    t.same(await tracks(t, llhlsUrl(j, 'live/by-srt')), BOTH, 'read over LL-HLS');
    await whep(t, j, 'live/by-srt');
  });

  await t.test('published over WHIP (Chromium)', { skip: noBrowser() }, async (t) => {
    await whip(top, j, 'live/by-whip');
    t.same(await tracksOnceLive(t, rtmpUrl(j, 'live/by-whip')), BOTH, 'read over RTMP');
    t.same(await tracks(t, srtUrl(j, 'live/by-whip')), BOTH, 'read over SRT');
    t.same(await tracks(t, rtmpUrl(j, 'live/by-whip')), BOTH, 'read over RTMP again (a late reader)');
    t.same(await tracks(t, llhlsUrl(j, 'live/by-whip')), BOTH, 'read over LL-HLS');
  });

  await t.test('every publication is seen by sessions and events', async (t) => {
    const sessions = (await j.run.req('GET', '/api/v3/session/active?collectors=rtmp,srt,webrtc')).body as Record<string, unknown[]>;
    t.ok(sessions.rtmp!.length > 0 && sessions.srt!.length > 0, `GET /api/v3/session/active lists RTMP and SRT sessions (${JSON.stringify(sessions).slice(0, 300)})`);
    const sse = await SseClient.open(`${j.run.url}/api/v3/events?last_event_id=0&types=ingest.publish.start`, { authorization: `Bearer ${j.run.token}` });
    t.teardown(() => sse.close());
    const protocols = noBrowser() ? ['rtmp', 'srt'] : ['rtmp', 'srt', 'webrtc'];
    for (const protocol of protocols) {
      const e = await sse.next((e) => e.subject.protocol === protocol && /live\/by-/.test(e.subject.stream ?? ''), `ingest.publish.start over ${protocol} (${JSON.stringify(sse.events.map((e) => e.subject))})`, 5000);
      t.pass(`ingest.publish.start of ${e.subject.stream} over ${protocol}`);
    }
  });
});

/** Chromium publishes its fake camera and microphone over WHIP to `name` (with the WebRTC token). */
async function whip(t: Test, j: Journey, name: string): Promise<void> {
  const browser = await launchChromium(t);
  const page = await browser.newPage();
  await page.goto(`${j.run.url}/ping`);
  const status = await page.evaluate(async ({ token, name }) => {
    const media = await navigator.mediaDevices.getUserMedia({ video: { width: 320, height: 240 }, audio: true });
    const pc = new RTCPeerConnection();
    (window as unknown as { pc: RTCPeerConnection }).pc = pc;
    for (const track of media.getTracks()) pc.addTransceiver(track, { direction: 'sendonly' });
    await pc.setLocalDescription(await pc.createOffer());
    await new Promise((r) => setTimeout(r, 300));
    const res = await fetch(`/webrtc/${name}/whip`, { method: 'POST', headers: { 'Content-Type': 'application/sdp', Authorization: `Bearer ${token}` }, body: pc.localDescription!.sdp });
    if (res.status === 201) await pc.setRemoteDescription({ type: 'answer', sdp: await res.text() });
    return res.status;
  }, { token: WEBRTC_TOKEN, name });
  t.equal(status, 201, `POST /webrtc/${name}/whip: 201 with the answer`);
  await waitFor(async () => (await j.run.req('GET', '/api/v3/webrtc')).body.some?.((s: { kind: string; connected: boolean }) => s.kind === 'whip' && s.connected),
    { timeout: 30_000, what: 'the WHIP publisher connected' });
  t.pass('GET /api/v3/webrtc lists the WHIP publisher, connected');
}
