import t from 'tap';
import { childPids } from '../../helpers/net-proc.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg } from '../srt/srt-helpers.ts';
import { ndcViewer, SOURCE, startWebrtcApp, TOKEN, withMedia } from './helpers.ts';

/*
 * Issue 46.2: the WebRTC host process holds its memory only while it has work. With no session and
 * no feed for `webrtc.host_idle_seconds` it ends (no fault: no restart, nothing lost), the next
 * offer starts it again and plays; `0` keeps it. Without the change the host of the boot runs on.
 */

const hostPid = (): number | undefined => childPids((cmd) => cmd.includes('webrtc/host/entry'))[0];

t.test('an idle host ends, the next viewer starts one and plays, and it ends again after the viewer left', async (t) => {
  const app = await startWebrtcApp(t, { host_idle_seconds: 1 });
  await waitFor(() => hostPid() === undefined, { timeout: 15_000, what: 'the boot\'s host ended, idle' });
  t.pass('no host while nothing is watched');
  ffmpeg(t, [...SOURCE, '-f', 'flv', `${app.rtmpBase}/live/idle`], 120_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body?.length === 1, { timeout: 30_000, what: 'RTMP publisher' });

  const v = await ndcViewer(t, app.url, 'live/idle');
  t.equal(v.status, 201, 'the offer is answered by a host started for it');
  const pid = hostPid();
  t.ok(pid, 'a host runs');
  const [played] = await withMedia(t, app.url, 'live/idle', [v], 50);
  await waitFor(() => played!.audio >= 20, { timeout: 30_000, what: 'audio from the new host' });
  await app.request('DELETE', played!.session!, { headers: { authorization: `Bearer ${TOKEN}` } });
  played!.close();
  // the feed lingers 10 s after its last viewer, then the host is idle for 1 s
  await waitFor(() => hostPid() === undefined, { timeout: 40_000, what: 'the host ended after its last feed' });
  t.pass('the host ended once it held nothing');
  t.same((await app.request('GET', '/api/v3/webrtc')).body, [], 'no session lost or left behind');

  const again = await ndcViewer(t, app.url, 'live/idle');
  t.equal(again.status, 201, 'the next viewer starts a host again');
  t.not(hostPid(), pid, 'a new host process');
  await withMedia(t, app.url, 'live/idle', [again], 50);
  const log = JSON.stringify((await app.request('GET', '/api/v3/log')).body);
  t.ok(log.includes('held no session: ended'), 'the idle ends are in the log');
  t.notOk(log.includes('ended (its sessions with it)'), 'no idle end was taken for a fault');
});

t.test('two offers at once while no host runs share one start', async (t) => {
  const app = await startWebrtcApp(t, { host_idle_seconds: 1 });
  await waitFor(() => hostPid() === undefined, { timeout: 15_000, what: 'the boot\'s host ended, idle' });
  ffmpeg(t, [...SOURCE, '-f', 'flv', `${app.rtmpBase}/live/two`], 120_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body?.length === 1, { timeout: 30_000, what: 'RTMP publisher' });
  const [a, b] = await Promise.all([ndcViewer(t, app.url, 'live/two'), ndcViewer(t, app.url, 'live/two')]);
  t.same([a.status, b.status], [201, 201], 'both answered');
  t.equal(childPids((cmd) => cmd.includes('webrtc/host/entry')).length, 1, 'one host');
  await withMedia(t, app.url, 'live/two', [a, b], 30);
});

t.test('host_idle_seconds 0 keeps the host', async (t) => {
  await startWebrtcApp(t, { host_idle_seconds: 0 });
  const pid = await waitFor(() => hostPid(), { what: 'the host' });
  // a negative: nothing may happen in this time (a 1 s idle end would have come twice over)
  await new Promise((r) => setTimeout(r, 2500));
  t.equal(hostPid(), pid, 'the same host after seconds of nothing');
});
