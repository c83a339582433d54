import t from 'tap';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { launchChromium, noBrowser } from '../../helpers/browser.ts';
import { waitFor } from '../../helpers/wait.ts';
import { probeTracks } from '../../helpers/probe.ts';
import { placeholdersRef } from '../../../sdk/index.ts';
import { ffmpeg, srtUrl } from '../srt/srt-helpers.ts';
import { ndcViewer, startWebrtcApp, TOKEN } from './helpers.ts';

const skip = noBrowser();
t.test('a WHIP publish from Chromium (fake camera and microphone) is read back by ffmpeg over RTMP', { skip }, async (t) => {
  const app = await startWebrtcApp(t, {}, { srt: { enable: true, address: '127.0.0.1:0' } });
  const browser = await launchChromium(t);
  const page = await browser.newPage();
  await page.goto(`${app.url}/ping`);
  const status = await page.evaluate(async ({ token }) => {
    const media = await navigator.mediaDevices.getUserMedia({ video: { width: 320, height: 240 }, audio: true });
    const pc = new RTCPeerConnection();
    (window as unknown as { pc: RTCPeerConnection }).pc = pc;
    for (const track of media.getTracks()) pc.addTransceiver(track, { direction: 'sendonly' });
    await pc.setLocalDescription(await pc.createOffer());
    await new Promise((r) => setTimeout(r, 300));
    const res = await fetch('/webrtc/live/browser/whip', { method: 'POST', headers: { 'Content-Type': 'application/sdp', Authorization: `Bearer ${token}` }, body: pc.localDescription!.sdp });
    if (res.status !== 201) return res.status;
    (window as unknown as { session: string }).session = res.headers.get('Location')!;
    await pc.setRemoteDescription({ type: 'answer', sdp: await res.text() });
    return res.status;
  }, { token: TOKEN });
  t.equal(status, 201, 'the WHIP offer was answered');
  await waitFor(async () => (await app.request('GET', '/api/v3/webrtc')).body.some?.((s: { kind: string; connected: boolean }) => s.kind === 'whip' && s.connected), { timeout: 20_000, what: 'the publisher connected' });

  // issue 44.2: read over RTMP and SRT, video is track #0 and audio #1 (as the ingest's PMT lists them)
  const srtPort = Number(/:(\d+)\?/.exec((app.service.app.kernel.services.resolve(placeholdersRef) as { get(n: string): { value(s: string): string } }).get('srt').value('input'))![1]);
  t.same(await probeTracks(t, `${app.rtmpBase}/live/browser`), ['video', 'audio'], 'over RTMP: video #0, audio #1');
  t.same(await probeTracks(t, srtUrl(srtPort, 'live/browser', '')), ['video', 'audio'], 'over SRT: video #0, audio #1');

  const out = join(app.dir, 'back.ts');
  const play = ffmpeg(t, ['-i', `${app.rtmpBase}/live/browser`, '-frames:v', '20', '-c', 'copy', '-f', 'mpegts', out], 60_000);
  await play.done;
  t.equal(play.code, 0, `ffmpeg read the WHIP stream over RTMP (${play.stderr})`);
  const probe = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name', '-of', 'csv=p=0', out], { encoding: 'utf8' });
  t.same([...new Set(probe.stdout.split('\n').filter(Boolean))].sort(), ['aac', 'h264'], 'H.264 passed through, Opus made AAC');

  const viewer = await ndcViewer(t, app.url, 'live/browser');
  await waitFor(() => viewer.video >= 25 && viewer.audio >= 25, { timeout: 30_000, what: 'a WHEP viewer of the WHIP stream gets video and audio' });
  viewer.close();
  const sessions = (await app.request('GET', '/api/v3/webrtc')).body as { id: string; kind: string; rx_bytes: number }[];
  t.ok(sessions.find((s) => s.kind === 'whip')!.rx_bytes > 0, 'its bytes are counted');
  const session = await page.evaluate(() => (window as unknown as { session: string }).session);
  t.equal((await app.request('DELETE', session, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200, 'DELETE ends the publish');
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body.length === 0
    && !(await app.request('GET', '/api/v3/webrtc')).body.some((s: { kind: string }) => s.kind === 'whip'), { what: 'the stream and the session are gone' });
});

t.test('a second WHIP publisher of a live stream is refused 409', { skip }, async (t) => {
  const app = await startWebrtcApp(t, { token: '' });
  const pub = ffmpeg(t, ['-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '10', '-f', 'flv', `${app.rtmpBase}/live/taken`], 60_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body?.length === 1, { timeout: 30_000, what: `RTMP publisher (${pub.stderr})` });
  const browser = await launchChromium(t);
  const page = await browser.newPage();
  await page.goto(`${app.url}/ping`);
  const status = await page.evaluate(async () => {
    const media = await navigator.mediaDevices.getUserMedia({ video: true });
    const pc = new RTCPeerConnection();
    pc.addTransceiver(media.getVideoTracks()[0]!, { direction: 'sendonly' });
    await pc.setLocalDescription(await pc.createOffer());
    const res = await fetch('/webrtc/live/taken/whip', { method: 'POST', headers: { 'Content-Type': 'application/sdp' }, body: pc.localDescription!.sdp });
    return res.status;
  });
  t.equal(status, 409, 'the stream is taken');
});
