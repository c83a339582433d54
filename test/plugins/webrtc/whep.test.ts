import t from 'tap';
import { request as httpRequest } from 'node:http';
import { launchChromium, noBrowser } from '../../helpers/browser.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg } from '../srt/srt-helpers.ts';
import { received, SOURCE, startWebrtcApp, TOKEN } from './helpers.ts';

const skip = noBrowser();

t.test('Chromium plays an RTMP stream over WHEP from the player page; the session is counted and ends with the page', { skip }, async (t) => {
  // loopback is on the sessions' default ignore list: this test counts it
  const app = await startWebrtcApp(t, {}, { sessions: { ip_ignorelist: [] } });
  const pub = ffmpeg(t, [...SOURCE, '-f', 'flv', `${app.rtmpBase}/live/cam`], 120_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body?.some?.((c: { name: string }) => c.name === '/live/cam'), { timeout: 30_000, what: `RTMP publisher (${pub.stderr})` });

  const browser = await launchChromium(t);
  const page = await browser.newPage();
  const res = await page.goto(`${app.url}/webrtc/live/cam?token=${TOKEN}`);
  t.equal(res?.status(), 200, 'the player page');
  const got = await waitFor(async () => { const r = await received(page); return r.frames >= 25 && r.audio >= 25 ? r : undefined; },
    { timeout: 30_000, what: 'decoded frames and audio in Chromium' });
  t.equal(got.state, 'connected');
  t.ok(got.frames >= 25, `Chromium decoded ${got.frames} frames`);

  const sessions = (await app.request('GET', '/api/v3/webrtc')).body as { kind: string; stream: string; connected: boolean; tx_bytes: number }[];
  t.match(sessions, [{ kind: 'whep', stream: 'live/cam', connected: true }], 'GET /api/v3/webrtc lists the viewer');
  const active = await waitFor(async () => {
    const body = (await app.request('GET', '/api/v3/session/active?collectors=webrtc')).body?.webrtc;
    return Array.isArray(body) && body.length === 1 && body[0].bandwidth_tx_kbit > 0 ? body : undefined;
  }, { what: 'an active webrtc session with traffic' });
  t.match(active[0], { local: 'play:live/cam' }, 'the sessions plugin counts the viewer');

  // the page's own end (its `pagehide`: the WHEP DELETE and the peer's close), fired in the page: a
  // browser closing a tab on a loaded box may kill the renderer before it runs any handler (then ICE
  // consent ends the session ~27 s later: feeds.test.ts covers that way), so the close waits for it
  const closing = performance.now();
  await page.evaluate(() => { dispatchEvent(new PageTransitionEvent('pagehide', { persisted: false })); });
  await waitFor(async () => (await app.request('GET', '/api/v3/webrtc')).body.length === 0, { timeout: 20_000, what: 'the session ended with the page' });
  t.pass(`the session ended ${Math.round(performance.now() - closing)} ms after the page's pagehide`);
  await page.close({ runBeforeUnload: true });
  await waitFor(async () => (await app.request('GET', '/api/v3/session/active?collectors=webrtc')).body.webrtc.length === 0, { what: 'and is no longer active' });
});

t.test('a wrong or missing token is refused; unknown streams, bad offers and trickle are answered as WHEP says', { skip }, async (t) => {
  const app = await startWebrtcApp(t);
  const browser = await launchChromium(t);
  const page = await browser.newPage();
  await page.goto(`${app.url}/ping`);
  const offer = await page.evaluate(async () => {
    const pc = new RTCPeerConnection();
    pc.addTransceiver('video', { direction: 'recvonly' });
    pc.addTransceiver('audio', { direction: 'recvonly' });
    await pc.setLocalDescription(await pc.createOffer());
    return pc.localDescription!.sdp;
  });
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    app.request('POST', path, { raw: body, headers: { 'content-type': 'application/sdp', ...headers } });

  const wrong = await post('/webrtc/live/cam/whep', offer, { authorization: 'Bearer nope' });
  t.equal(wrong.status, 401, 'wrong token');
  t.match(wrong.body, { code: 401, message: String, details: Array }, 'with an Error body');
  t.equal(wrong.headers.get('www-authenticate'), 'Bearer');
  t.equal((await post('/webrtc/live/cam/whep', offer)).status, 401, 'no token');
  t.equal((await app.request('GET', '/webrtc/live/cam?token=nope')).status, 401, 'no page without the token, whether the stream exists or not');
  t.equal((await app.request('GET', `/webrtc/live/cam?token=${TOKEN}`)).status, 404, 'no page for a stream nothing publishes');

  const auth = { authorization: `Bearer ${TOKEN}` };
  const missing = await post('/webrtc/live/none/whep', offer, auth);
  t.equal(missing.status, 404, 'a stream nothing publishes');
  t.match(missing.body, { code: 404 });
  t.equal((await post('/webrtc/live/cam/whep', 'hello', auth)).status, 400, 'not an SDP');
  t.equal((await post('/webrtc/live/cam/whep', `v=0\r\n${'a=x\r\n'.repeat(20_000)}`, auth)).status, 413, 'an SDP over 64 KiB');
  t.equal((await app.request('POST', '/webrtc/live/cam/whep', { raw: offer, headers: { 'content-type': 'text/plain', ...auth } })).status, 415, 'not application/sdp');
  const untyped = await app.request('POST', '/webrtc/live/cam/whep', { raw: Buffer.from(offer), headers: auth });
  t.match([untyped.status, untyped.body], [415, { code: 415, details: ['the offer must be sent as application/sdp'] }], 'no Content-Type: 415 as well');
  t.equal((await app.request('POST', '/webrtc/live/cam/whep', { raw: Buffer.from(offer) })).status, 401, 'and without a token still 401 first');
  t.equal((await post('/webrtc/live/cam', offer, auth)).status, 404, 'neither whep nor whip');
  // the stream-name rule of every protocol (RTMP and SRT refuse the same names)
  // (sent raw: fetch would resolve the dot segments itself)
  const raw = (path: string) => new Promise<[number, unknown]>((resolve, reject) => {
    const req = httpRequest(`${app.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/sdp', ...auth } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => { text += c; }).on('end', () => resolve([res.statusCode ?? 0, JSON.parse(text)]));
    });
    req.on('error', reject);
    req.end(offer);
  });
  for (const bad of ['live/a%20b', 'live/a%5Cb', 'live/%23x', 'live/a%09b']) {
    for (const kind of ['whep', 'whip']) {
      t.match(await raw(`/webrtc/${bad}/${kind}`), [400, { code: 400, details: [/^invalid stream name/] }], `${bad}/${kind}`);
    }
  }
  // dot segments are resolved with the URL, before the route: never a stream's name
  t.match(await raw('/webrtc/live/%2e%2e/whip'), [404, { details: ['POST to /webrtc/<stream>/whep or /webrtc/<stream>/whip'] }]);
  const patch = await app.request('PATCH', '/webrtc/session/abc', { raw: 'a=candidate', headers: { 'content-type': 'application/trickle-ice-sdpfrag' } });
  t.equal(patch.status, 405, 'trickle ICE is not offered');
  t.equal((await app.request('DELETE', '/webrtc/session/abc', { headers: auth })).status, 404, 'no such session');
  // a body on a DELETE (some clients send the SDP again, or an empty JSON) is not read
  for (const type of ['application/sdp', 'text/plain', 'application/json']) {
    const r = await app.request('DELETE', '/webrtc/session/abc', { raw: 'v=0', headers: { ...auth, 'content-type': type } });
    t.equal(r.status, 404, `a ${type} body on a DELETE: still the session's answer (${r.status} ${r.text})`);
  }
  const pre = await app.request('OPTIONS', '/webrtc/live/cam/whep', { headers: { origin: 'https://player.example', 'access-control-request-method': 'POST' } });
  t.equal(pre.headers.get('access-control-allow-origin'), '*', 'CORS for players on other origins');
  t.match(pre.headers.get('access-control-expose-headers'), /Location/);
});
