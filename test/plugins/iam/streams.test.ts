import t from 'tap';
import { get as httpGet } from 'node:http';
import { play, publish, startRtmpApp } from '../rtmp/helpers.ts';
import { waitFor } from '../../helpers/wait.ts';

/*
 * Issue 49, the first protocol: a key per user over RTMP (`?token=<user>:<token>`, real ffmpeg
 * publishers and players). Where `rtmp.token` does not match, IAM decides: the user must hold
 * that token and an `rtmp` policy for the stream and the direction. A wrong user and a wrong
 * token are refused alike; the refusal is logged with the user, the stream and the action, never
 * the key; `rtmp.token` keeps working as the superuser's.
 */

const KEY_A = 'key-a-5f1c9e04b7d2a8c3';
const KEY_B = 'key-b-0d7e3a91c4f6b25e';
const users = [
  { name: 'customer-a', auth: { services: { token: [KEY_A] } }, policies: [{ types: ['rtmp'], resource: 'live/customer-a/*', actions: ['PUBLISH', 'PLAY'] }] },
  { name: 'viewer-b', auth: { services: { token: [KEY_B] } }, policies: [{ types: ['rtmp'], resource: 'live/customer-b/*', actions: ['PLAY'] }] },
];
const logText = async (app: { request: (m: string, p: string) => Promise<{ body: unknown }> }) => JSON.stringify((await app.request('GET', '/api/v3/log')).body);

t.test('RTMP with a user\'s key: its streams published and played, the others refused', async (t) => {
  const app = await startRtmpApp(t, { token: 'global-token' }, { iam: { enable: true } });
  for (const u of users) t.equal((await app.request('POST', '/api/v3/iam/user', { body: u })).status, 200);
  const url = (stream: string, key: string) => `${app.base}/${stream}?token=${encodeURIComponent(key)}`;

  publish(t, url('live/customer-a/cam', `customer-a:${KEY_A}`), { seconds: 120 });
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body.length === 1, { timeout: 30_000, what: 'the user\'s publisher listed' });
  const own = play(t, url('live/customer-a/cam', `customer-a:${KEY_A}`), { frames: 5 });
  t.equal(await own.done, 0, 'the user plays its own stream');
  const global = play(t, url('live/customer-a/cam', 'global-token'), { frames: 5 });
  t.equal(await global.done, 0, 'rtmp.token plays it too (the superuser\'s)');

  t.not(await play(t, url('live/customer-a/cam', `viewer-b:${KEY_B}`), { frames: 5, timeoutMs: 20_000 }).done, 0, 'another user\'s policy does not name it');
  t.not(await play(t, url('live/customer-a/cam', `customer-a:${KEY_B}`), { frames: 5, timeoutMs: 20_000 }).done, 0, 'a wrong token of the user');
  t.not(await play(t, url('live/customer-a/cam', `nobody:${KEY_A}`), { frames: 5, timeoutMs: 20_000 }).done, 0, 'a user that does not exist');
  t.not(await publish(t, url('live/customer-b/cam', `customer-a:${KEY_A}`), { seconds: 5 }).done, 0, 'publishing outside its policy');
  t.not(await publish(t, url('live/customer-b/cam', `viewer-b:${KEY_B}`), { seconds: 5 }).done, 0, 'a PLAY-only policy does not publish');

  const log = await logText(app);
  t.match(log, /user viewer-b may not PLAY live\/customer-a\/cam/, 'the refusal names the user, the action and the stream');
  t.match(log, /user customer-a may not PUBLISH live\/customer-b\/cam/);
  t.match(log, /rtmp play refused: invalid token/, 'a wrong user or token: invalid token');
  t.notMatch(log, new RegExp(`${KEY_A}|${KEY_B}`), 'no key reaches the log');
});

t.test('without iam a user\'s key is a wrong token', async (t) => {
  const app = await startRtmpApp(t, { token: 'global-token' });
  t.not(await publish(t, `${app.base}/live/customer-a/cam?token=customer-a:${KEY_A}`, { seconds: 5 }).done, 0);
  t.match(await logText(app), /rtmp publish refused: invalid token/);
});

t.test('WHEP with a user\'s key: its streams played, another\'s refused 403, a wrong key 401; its session ended only with its key', async (t) => {
  const { ndcViewer, SOURCE, startWebrtcApp, TOKEN } = await import('../webrtc/helpers.ts');
  const { ffmpeg } = await import('../srt/srt-helpers.ts');
  const app = await startWebrtcApp(t, {}, { iam: { enable: true } });
  const u = { name: 'customer-a', auth: { services: { token: [KEY_A] } }, policies: [{ types: ['webrtc'], resource: 'live/customer-a/*', actions: ['PLAY'] }] };
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: u })).status, 200);
  ffmpeg(t, [...SOURCE, '-f', 'flv', `${app.rtmpBase}/live/customer-a/cam`], 120_000);
  ffmpeg(t, [...SOURCE, '-f', 'flv', `${app.rtmpBase}/live/customer-b/cam`], 120_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body?.length === 2, { timeout: 30_000, what: 'two RTMP publishers' });
  const mine = await ndcViewer(t, app.url, 'live/customer-a/cam', `customer-a:${KEY_A}`);
  t.equal(mine.status, 201, 'the user plays its stream over WHEP');
  await waitFor(() => mine.video >= 20, { timeout: 30_000, what: 'video at the user\'s viewer' });
  const other = await app.request('POST', '/webrtc/live/customer-b/cam/whep', { headers: { authorization: `Bearer customer-a:${KEY_A}`, 'content-type': 'application/sdp' }, body: 'v=0\r\n' as never });
  t.equal(other.status, 403, 'another customer\'s stream');
  t.match(other.body, { details: ['user customer-a may not PLAY live/customer-b/cam'] });
  const wrong = await app.request('POST', '/webrtc/live/customer-a/cam/whep', { headers: { authorization: `Bearer customer-a:${KEY_B}`, 'content-type': 'application/sdp' }, body: 'v=0\r\n' as never });
  t.equal(wrong.status, 401, 'a wrong key');
  const page = await app.request('GET', `/webrtc/live/customer-a/cam?token=customer-a:${KEY_A}`);
  t.equal(page.status, 200, 'the player page with the key');
  t.equal((await app.request('DELETE', mine.session!, { headers: { authorization: `Bearer customer-a:${KEY_B}` } })).status, 401, 'a wrong key ends nothing');
  t.equal((await app.request('DELETE', mine.session!, { headers: { authorization: `Bearer customer-a:${KEY_A}` } })).status, 200, 'its own key ends its session');
  t.equal((await app.request('GET', '/webrtc/live/customer-a/cam', { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200, 'webrtc.token as before');
});

for (const threads of [0, 2]) t.test(`LL-HLS with a user's key (${threads} serving threads): its streams' playlists, another's 403, a wrong key 401`, async (t) => {
  const app = await startRtmpApp(t, {}, { iam: { enable: true }, http: { threads }, llhls: { enable: true, target_duration_seconds: 1, part_target_ms: 200, token: 'global-token' } });
  const u = { name: 'customer-a', auth: { services: { token: [KEY_A] } }, policies: [{ types: ['hls'], resource: 'live/customer-a/*', actions: ['PLAY'] }] };
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: u })).status, 200);
  publish(t, `${app.base}/live/customer-a/cam`, { seconds: 120 });
  publish(t, `${app.base}/live/customer-b/cam`, { seconds: 120 });
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body.length === 2, { timeout: 30_000, what: 'two publishers' });
  // a new connection each (no keep-alive): with threads, the kernel spreads them over main and the threads
  const get = (stream: string, token: string) => new Promise<{ status: number; text: string }>((resolve, reject) => {
    httpGet(`${app.url}/hls/${stream}/index.m3u8?token=${encodeURIComponent(token)}`, { agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    }).on('error', reject);
  });
  const mine = await waitFor(async () => { const r = await get('live/customer-a/cam', `customer-a:${KEY_A}`); return r.status === 200 ? r : undefined; }, { timeout: 30_000, what: 'the user\'s playlist' });
  t.match(mine.text, /#EXT-X-PART/, 'the user plays its stream\'s LL-HLS');
  const other = await get('live/customer-b/cam', `customer-a:${KEY_A}`);
  t.equal(other.status, 403, 'another customer\'s stream');
  t.match(other.text, /user customer-a may not PLAY live\/customer-b\/cam/);
  t.equal((await get('live/customer-a/cam', `customer-a:${KEY_B}`)).status, 401, 'a wrong key');
  t.equal((await get('live/customer-b/cam', 'global-token')).status, 200, 'llhls.token as before');
  // reloads on new connections: with threads, most land on a thread, which serves the admitted viewer
  for (let i = 0; i < 8; i++) t.equal((await get('live/customer-a/cam', `customer-a:${KEY_A}`)).status, 200, `reload ${i + 1}`);
  for (let i = 0; i < 4; i++) t.equal((await get('live/customer-b/cam', `customer-a:${KEY_A}`)).status, 403, `another's, again ${i + 1}`);
});

t.test('SRT with a user\'s key: its stream published and played, another\'s refused, a wrong key refused', async (t) => {
  const srt = await import('../srt/srt-helpers.ts');
  const app = await srt.startSrtApp(t, {}, { iam: { enable: true }, log: { level: 'debug' } });
  const u = { name: 'customer-a', auth: { services: { token: [KEY_A] } }, policies: [{ types: ['srt'], resource: 'live/customer-a/*', actions: ['PUBLISH', 'PLAY'] }] };
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: u })).status, 200);
  const sid = (stream: string, mode: string, key: string) => encodeURIComponent(`${stream},mode:${mode},token:${key}`);
  srt.ffmpeg(t, [...srt.SOURCE, '-t', '60', '-f', 'mpegts', srt.srtUrl(app.srtPort, sid('live/customer-a/cam', 'publish', `customer-a:${KEY_A}`))], 90_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body.publisher?.['live/customer-a/cam'] !== undefined, { timeout: 30_000, what: 'the user\'s SRT publisher' });
  const reader = srt.ffmpeg(t, ['-i', srt.srtUrl(app.srtPort, sid('live/customer-a/cam', 'request', `customer-a:${KEY_A}`)), '-frames:v', '5', '-f', 'null', '-'], 40_000);
  await reader.done;
  t.equal(reader.code, 0, `the user plays its stream (${reader.stderr.slice(-300)})`);
  const other = srt.ffmpeg(t, [...srt.SOURCE, '-t', '5', '-f', 'mpegts', srt.srtUrl(app.srtPort, sid('live/customer-b/cam', 'publish', `customer-a:${KEY_A}`))], 30_000);
  await other.done;
  t.not(other.code, 0, 'publishing another customer\'s stream');
  const wrong = srt.ffmpeg(t, ['-i', srt.srtUrl(app.srtPort, sid('live/customer-a/cam', 'request', `customer-a:${KEY_B}`)), '-frames:v', '5', '-f', 'null', '-'], 30_000);
  await wrong.done;
  t.not(wrong.code, 0, 'a wrong key');
  t.equal((await app.request('GET', '/api/v3/srt')).body.publisher?.['live/customer-b/cam'], undefined, 'nothing published there');
  const log = JSON.stringify((await app.request('GET', '/api/v3/log')).body);
  t.match(log, /user customer-a may not PUBLISH live\/customer-b\/cam/, 'the refusal names the user, the action and the stream');
  t.notMatch(log, new RegExp(`${KEY_A}|${KEY_B}`), 'no key reaches the log');
});
