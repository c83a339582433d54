import t from 'tap';
import type { TestApp, TestLike } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';
import { ffmpeg as rtmpFfmpeg, publish } from '../../plugins/rtmp/helpers.ts';
import { PASS, srtCaller, startSrtApp, TOKEN } from '../../plugins/srt/srt-helpers.ts';

/*
 * Issue 44.3: every refused publish or play is logged with its protocol, stream name, client
 * address and reason, on RTMP, SRT and WebRTC (found: a second SRT publish refused for a wrong
 * passphrase from the same address within 10 s was only counted in a later line, nameless).
 */

type Line = { message: string; protocol?: string; stream?: string; peer?: string; remote?: string; reason?: string; suppressed?: number };

async function lines(app: TestApp, message: RegExp): Promise<Line[]> {
  return ((await app.request('GET', '/api/v3/log?format=raw')).body as Line[]).filter((l) => message.test(l.message));
}

const WEB_TOKEN = 'web-token';

async function start(t: TestLike) {
  const app = await startSrtApp(t, {}, {
    rtmp: { enable: true, address: '127.0.0.1:0', token: 'rtmp-token' },
    webrtc: { enable: true, bind_address: '127.0.0.1', token: WEB_TOKEN },
  });
  const rtmp = app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService;
  return Object.assign(app, { rtmpBase: `rtmp://127.0.0.1:${rtmp.ports().rtmp}` });
}

/** An SRT call that is refused (in the handshake, or closed at accept). */
function srtRefused(port: number, streamid: string, passphrase: string): void {
  try {
    srtCaller(port, streamid, passphrase).stop();
  } catch { /* refused in the handshake */ }
}

t.test('SRT: each refused publish and play has its line, a retry within seconds too', async (t) => {
  const app = await start(t);
  // from 127.0.0.1, which is never locked out: the same client retrying with a wrong passphrase
  for (let i = 0; i < 3; i++) srtRefused(app.srtPort, `live/cam,mode:publish,token:${TOKEN}`, 'wrong-passphrase-x');
  srtRefused(app.srtPort, `live/other,mode:publish,token:${TOKEN}`, 'wrong-passphrase-x');
  srtRefused(app.srtPort, `live/none,mode:request,token:${TOKEN}`, PASS);
  const refused = await waitFor(async () => {
    const l = await lines(app, /^SRT connection refused/);
    return l.filter((x) => x.reason === 'badSecret: wrong passphrase').length >= 4 && l.some((x) => x.stream === 'live/none') ? l : undefined;
  }, { timeout: 20_000, what: 'a line for each refusal' });
  const secret = refused.filter((x) => x.reason === 'badSecret: wrong passphrase');
  t.same(secret.map((x) => x.stream), ['live/cam', 'live/cam', 'live/cam', 'live/other'], 'every wrong-passphrase refusal has its own line with its stream');
  t.ok(secret.every((x) => x.protocol === 'srt' && /^127\.0\.0\.1:\d+$/.test(x.peer ?? '')), 'each with the protocol and the client address');
  t.match(refused.find((x) => x.stream === 'live/none'), { protocol: 'srt', peer: /^127\.0\.0\.1:\d+$/, reason: /^notFound/ }, 'a refused play too');
});

t.test('RTMP: refused publish and play lines carry protocol, stream, address and reason', async (t) => {
  const app = await start(t);
  const bad = publish(t, `${app.rtmpBase}/live/cam?token=wrong`, { seconds: 5 });
  await bad.done;
  const play = rtmpFfmpeg(t, ['-i', `${app.rtmpBase}/live/nothing?token=rtmp-token`, '-f', 'null', '-'], 30_000);
  await play.done;
  const refused = await waitFor(async () => {
    const l = await lines(app, /^rtmp (publish|play) refused/);
    return l.length >= 2 ? l : undefined;
  }, { what: 'the RTMP refusals logged' });
  t.match(refused.find((l) => l.message.startsWith('rtmp publish')), { protocol: 'rtmp', stream: '/live/cam', remote: /^127\.0\.0\.1:\d+$/, reason: /token/ }, 'the refused publish');
  t.match(refused.find((l) => l.message.startsWith('rtmp play')), { protocol: 'rtmp', stream: '/live/nothing', remote: /^127\.0\.0\.1:\d+$/, reason: 'stream not found' }, 'the refused play');
});

t.test('WebRTC: refused WHEP and WHIP offers are logged', async (t) => {
  const app = await start(t);
  const offer = 'v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\n';
  const whep = await app.request('POST', '/webrtc/live/nothing/whep', { raw: offer, headers: { 'content-type': 'application/sdp', authorization: `Bearer ${WEB_TOKEN}` } });
  t.equal(whep.status, 404, 'a play of a stream nobody publishes: 404');
  const whip = await app.request('POST', '/webrtc/live/cam/whip', { raw: offer, headers: { 'content-type': 'application/sdp', authorization: 'Bearer wrong' } });
  t.equal(whip.status, 401, 'a publish with a wrong token: 401');
  const refused = await lines(app, /^webrtc (play|publish) refused/);
  t.match(refused.find((l) => l.message.startsWith('webrtc play')), { protocol: 'webrtc', stream: 'live/nothing', remote: /^127\.0\.0\.1:\d+$/, reason: /nothing publishes/ }, 'the refused play');
  t.match(refused.find((l) => l.message.startsWith('webrtc publish')), { protocol: 'webrtc', stream: 'live/cam', remote: /^127\.0\.0\.1:\d+$/, reason: 'wrong token' }, 'the refused publish');
  t.notMatch(JSON.stringify(refused), WEB_TOKEN, 'the token never reaches the log');
});
