import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg } from '../srt/srt-helpers.ts';
import { ingestRecorderRef, type IngestRecorder } from '../rtmp/fixtures/ingest-recorder.ts';
import type { TestLike } from '../../helpers/app.ts';
import { SOURCE, startWebrtcApp, TOKEN } from './helpers.ts';

/*
 * webrtc.max_sessions and webrtc.max_publishers with offers recorded from Chromium (no media
 * connects, so no session ends by ICE while the test asks): the next offer is refused with 503,
 * a place freed is taken again, and offers that arrive together while a vendor's check waits
 * (a plugin's prePlay or prePublish hook) still never pass the limits.
 */

const WHEP = readFileSync(new URL('./fixtures/chromium-156-whep-offer.sdp', import.meta.url), 'utf8');
const WHIP = readFileSync(new URL('./fixtures/chromium-156-whip-offer.sdp', import.meta.url), 'utf8');
const headers = { 'content-type': 'application/sdp', authorization: `Bearer ${TOKEN}` };
const recorder = fileURLToPath(new URL('../rtmp/fixtures/ingest-recorder.ts', import.meta.url));

async function start(t: TestLike, webrtc: Record<string, unknown>) {
  const app = await startWebrtcApp(t, { connect_timeout_seconds: 300, ...webrtc }, { plugins: ['*', recorder] });
  const rec = app.service.app.kernel.services.resolve(ingestRecorderRef) as IngestRecorder;
  ffmpeg(t, [...SOURCE, '-f', 'flv', `${app.rtmpBase}/live/one`], 120_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body?.length === 1, { timeout: 30_000, what: 'RTMP publisher' });
  const whep = () => app.request('POST', '/webrtc/live/one/whep', { raw: WHEP, headers });
  const whip = (name: string) => app.request('POST', `/webrtc/${name}/whip`, { raw: WHIP, headers });
  const sessions = async () => (await app.request('GET', '/api/v3/webrtc')).body as unknown[];
  return { app, rec, whep, whip, sessions };
}

t.test('webrtc.max_sessions refuses the next viewer with 503; a place freed is taken again', async (t) => {
  const { app, whep, sessions } = await start(t, { max_sessions: 1 });
  const first = await whep();
  t.equal(first.status, 201);
  const second = await whep();
  t.equal(second.status, 503, 'over the limit');
  t.match(second.body, { code: 503, details: [/max_sessions/] });
  t.equal((await sessions()).length, 1);
  t.equal((await app.request('DELETE', first.headers.get('location')!, { headers })).status, 200);
  t.equal((await whep()).status, 201, 'the freed place');
});

t.test('viewers that offer together while a plugin\'s prePlay waits never pass webrtc.max_sessions', async (t) => {
  const { rec, whep, sessions } = await start(t, { max_sessions: 2 });
  const open = rec.holdPlays();
  const offers = Array.from({ length: 6 }, () => whep());
  await waitFor(() => rec.events.filter((e) => e.hook === 'prePlay').length >= 2, { what: 'two viewers in the check' });
  open();
  const statuses = (await Promise.all(offers)).map((r) => r.status).sort();
  t.same(statuses, [201, 201, 503, 503, 503, 503], 'two answered, the rest refused');
  t.equal(rec.events.filter((e) => e.hook === 'prePlay').length, 2, 'the refused were not checked');
  t.equal((await sessions()).length, 2);
});

t.test('publishers that offer together while a plugin\'s prePublish waits never pass webrtc.max_publishers', async (t) => {
  const { rec, whip, sessions } = await start(t, { max_sessions: 10, max_publishers: 1 });
  const open = rec.holdNextPublish();
  const offers = ['live/a', 'live/b', 'live/c'].map((n) => whip(n));
  await waitFor(() => rec.events.some((e) => e.hook === 'prePublish' && e.protocol === 'webrtc'), { what: 'a publisher in the check' });
  open();
  const statuses = (await Promise.all(offers)).map((r) => r.status).sort();
  t.same(statuses, [201, 503, 503], 'one answered, the rest refused');
  t.match((await sessions()), [{ kind: 'whip' }]);
});

t.test('webrtc.max_sessions_per_address: one client cannot take every place; the service\'s own address counts toward the total only', async (t) => {
  const app = await startWebrtcApp(t, { connect_timeout_seconds: 300, max_sessions_per_address: 2 }, { api: { access: { trusted_proxies: ['127.0.0.0/8', '::1/128'] } } });
  ffmpeg(t, [...SOURCE, '-f', 'flv', `${app.rtmpBase}/live/one`], 120_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body?.length === 1, { timeout: 30_000, what: 'RTMP publisher' });
  const whep = (from?: string) => app.request('POST', '/webrtc/live/one/whep', { raw: WHEP, headers: { ...headers, ...(from ? { 'x-forwarded-for': from } : {}) } });
  t.equal((await whep('198.51.100.7')).status, 201);
  t.equal((await whep('198.51.100.7')).status, 201);
  const third = await whep('198.51.100.7');
  t.equal(third.status, 429, 'a third from the same address');
  t.match(third.body, { code: 429, details: [/198\.51\.100\.7.*max_sessions_per_address/] });
  t.equal((await whep('198.51.100.8')).status, 201, 'another address');
  t.equal((await whep('2001:db8:1:2::1')).status, 201);
  t.equal((await whep('2001:db8:1:2::9')).status, 201);
  t.equal((await whep('2001:db8:1:2::ffff')).status, 429, 'an IPv6 /64 is one client');
  for (let i = 0; i < 3; i++) t.equal((await whep()).status, 201, 'the service\'s own address is not bounded per address');
});
