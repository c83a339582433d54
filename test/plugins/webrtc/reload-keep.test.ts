import t, { type Test } from 'tap';
import type { TestApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg } from '../srt/srt-helpers.ts';
import { ndcViewer, SOURCE, startWebrtcApp, TOKEN, withMedia } from './helpers.ts';

/*
 * Issue 44.1: a reload that leaves the WebRTC host's settings as they are keeps the host process
 * and its sessions (`ctx.keep`): a WHEP viewer watches on through a settings save. A changed
 * `webrtc.token` ends the sessions of the old token.
 */

async function reloadWith(t: Test, app: TestApp, body: Record<string, unknown>): Promise<void> {
  const before = app.service.app;
  const put = await app.request('PUT', '/api/v3/config', { body });
  t.equal(put.status, 200, `${JSON.stringify(body)} stored (${put.text.slice(0, 200)})`);
  t.equal((await app.request('GET', '/api/v3/config/reload')).text, '"OK"', 'and reloaded');
  await waitFor(() => app.service.app !== before && app.service.app.kernel.plugins.includes('webrtc'), { what: 'the reloaded app' });
}

const sessions = async (app: TestApp) => (await app.request('GET', '/api/v3/webrtc')).body as Array<{ id: string; connected: boolean }>;

t.test('a reload that changes only name keeps the WHEP viewer; one that changes webrtc.token ends it', async (t) => {
  const app = await startWebrtcApp(t, {}, { sessions: { enable: true, ip_ignorelist: [] } });
  const pub = ffmpeg(t, [...SOURCE, '-t', '120', '-f', 'flv', `${app.rtmpBase}/live/cam`], 150_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body?.length === 1, { timeout: 30_000, what: `the RTMP publisher (${pub.stderr})` });
  const made = await ndcViewer(t, app.url, 'live/cam');
  t.equal(made.status, 201, 'the viewer plays');
  const [viewer] = await withMedia(t, app.url, 'live/cam', [made], 51);
  const [first] = await waitFor(async () => { const s = await sessions(app); return s.length === 1 && s[0]!.connected ? s : undefined; }, { what: 'the session' });
  const active = async () => ((await app.request('GET', '/api/v3/session/active?collectors=webrtc')).body?.webrtc ?? []) as unknown[];
  await waitFor(async () => (await active()).length === 1, { what: 'the viewer among the active sessions' });

  await reloadWith(t, app, { name: 'renamed' });
  t.same((await sessions(app)).map((s) => s.id), [first!.id], 'the same WebRTC session after the reload');
  const seen = viewer.video;
  await waitFor(() => viewer.video > seen + 50, { timeout: 30_000, what: 'video packets after the reload' });
  t.pass('the viewer receives on');
  await waitFor(async () => (await active()).length === 1, { what: 'the viewer announced to the new app' });
  t.pass('GET /api/v3/session/active lists it again');

  await reloadWith(t, app, { webrtc: { token: `${TOKEN}-new` } });
  await waitFor(async () => (await sessions(app)).length === 0, { what: 'the old token\'s session ended' });
  t.pass('a changed token ends the session of the old one');
});
