import t from 'tap';
import { readFileSync } from 'node:fs';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg } from '../srt/srt-helpers.ts';
import { SOURCE, startWebrtcApp, TOKEN } from './helpers.ts';

/*
 * The WHEP/WHIP routes with offers recorded from Chromium (no browser, no media connects): the
 * token from the query, DELETE with and without it, the page behind the token, the publisher
 * limit, a video-only WHIP offer, and a session whose media never connects ending by its deadline.
 */

const WHEP = readFileSync(new URL('./fixtures/chromium-156-whep-offer.sdp', import.meta.url), 'utf8');
const WHIP = readFileSync(new URL('./fixtures/chromium-156-whip-offer.sdp', import.meta.url), 'utf8');
const sdp = { 'content-type': 'application/sdp' };
const auth = { authorization: `Bearer ${TOKEN}` };

t.test('tokens, sessions and deadlines', async (t) => {
  const app = await startWebrtcApp(t, { connect_timeout_seconds: 2, max_publishers: 1 });
  ffmpeg(t, [...SOURCE, '-f', 'flv', `${app.rtmpBase}/live/cam`], 120_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body?.length === 1, { timeout: 30_000, what: 'RTMP publisher' });

  t.equal((await app.request('GET', '/webrtc/live/cam')).status, 401, 'the page of a live stream needs the token');
  const page = await app.request('GET', `/webrtc/live/cam?token=${TOKEN}`);
  t.equal(page.status, 200);
  t.match(page.headers.get('content-type'), /text\/html/);
  t.notMatch(page.text, TOKEN, 'the page carries nothing of the request');
  t.equal((await app.request('GET', `/webrtc/?token=${TOKEN}`)).status, 404, 'no stream named');

  const play = await app.request('POST', `/webrtc/live/cam/whep?token=${TOKEN}`, { raw: WHEP, headers: sdp });
  t.equal(play.status, 201, 'the token from the query');
  t.match(play.headers.get('content-type'), /application\/sdp/);
  t.match(play.text, /^v=0/);
  const location = play.headers.get('location')!;
  t.match(location, /^\/webrtc\/session\/webrtc-[0-9a-f]{24}$/);
  t.match((await app.request('GET', '/api/v3/webrtc')).body, [{ kind: 'whep', stream: 'live/cam', connected: false }], 'listed, not connected');
  t.equal((await app.request('DELETE', location, { headers: { authorization: 'Bearer nope' } })).status, 401, 'DELETE needs the token');
  t.equal((await app.request('DELETE', location, { headers: auth })).status, 200, 'DELETE ends it');
  t.equal((await app.request('DELETE', location, { headers: auth })).status, 404, 'once');

  const late = await app.request('POST', '/webrtc/live/cam/whep', { raw: WHEP, headers: { ...sdp, ...auth } });
  t.equal(late.status, 201);
  await waitFor(async () => (await app.request('GET', '/api/v3/webrtc')).body.length === 0, { what: 'a session whose media never connects ends by its deadline' });

  const videoOnly = WHIP.slice(0, WHIP.indexOf('m=audio')) + WHIP.slice(WHIP.indexOf('m=video'));
  const pub = await app.request('POST', '/webrtc/live/pub/whip', { raw: videoOnly.replace(/a=group:BUNDLE 0 1/, 'a=group:BUNDLE 1'), headers: { ...sdp, ...auth } });
  t.equal(pub.status, 201, 'a video-only WHIP offer');
  t.match((await app.request('GET', '/api/v3/webrtc')).body, [{ kind: 'whip', stream: 'live/pub', connected: false }], 'listed as a publisher');
  const second = await app.request('POST', '/webrtc/live/pub2/whip', { raw: WHIP, headers: { ...sdp, ...auth } });
  t.equal(second.status, 503, 'webrtc.max_publishers');
  t.match(second.body, { code: 503, details: [/max_publishers/] });
  await waitFor(async () => (await app.request('GET', '/api/v3/webrtc')).body.length === 0, { what: 'the publisher that never connected ended' });
  const again = await app.request('POST', '/webrtc/live/pub/whip', { raw: WHIP, headers: { ...sdp, ...auth } });
  t.equal(again.status, 201, 'and its stream with it: the name is free again');
});
