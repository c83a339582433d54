import t from 'tap';
import { state, waitState } from '../../core/process/helpers.ts';
import { ownFfmpegs, readFrames, rtmpProcess } from '../../core/process/ondemand/helpers.ts';
import { startWebrtcApp, TOKEN } from './helpers.ts';

/*
 * A WHEP viewer over the on-demand budget (`encoder.ondemand`, issue 43): the feed asks the
 * stream table with the viewer's address, the engine refuses the start, and the offer gets 404
 * `STREAM_NOT_FOUND` as for a stream nothing publishes; the process keeps waiting, no ffmpeg runs.
 */

t.test('a WHEP viewer over its budget is refused like a missing stream and starts nothing', async (t) => {
  const app = await startWebrtcApp(t, {}, { encoder: { ondemand: { max_starts_per_client: 1, max_running: 0 } } });
  for (const id of ['wb1', 'wb2']) {
    t.equal((await app.request('POST', '/api/v3/process', { body: rtmpProcess(id, `live/${id}`) })).status, 200);
    await waitState(app, id, (s) => s.ondemand?.waiting === true, 'waiting');
  }
  // this address's one start: an RTMP player of the first
  t.ok(await readFrames(`${app.rtmpBase}/live/wb1`, 10) >= 10, 'an RTMP player starts the first and reads it');
  const r = await fetch(`${app.url}/webrtc/live/wb2/whep`, {
    method: 'POST', headers: { 'content-type': 'application/sdp', authorization: `Bearer ${TOKEN}` }, body: 'v=0\r\n',
  });
  t.equal(r.status, 404, 'the offer is refused');
  t.match(await r.json(), { code: 404, message: 'Stream not found' }, 'as for a stream nothing publishes');
  const s = await state(app, 'wb2');
  t.match({ waiting: s.ondemand.waiting, exec: s.exec }, { waiting: true, exec: 'finished' }, 'the second still waits');
  t.same(ownFfmpegs('live/wb2'), [], 'no ffmpeg for it');
});
