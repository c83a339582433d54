import t from 'tap';
import { streamTableRef, type FlvPacket, type IngestPeer, type StreamTable } from '../../../sdk/index.ts';
import { waitFor } from '../../helpers/wait.ts';
import { play, publish, startRtmpApp } from './helpers.ts';

/*
 * A published packet costs its bytes once (issue 29's lean aims) and no RTMP encoding until an RTMP
 * player reads it (issue 47's cost: a stream read only as LL-HLS, SRT or WebRTC never pays it).
 * The stream table keeps each packet's body (for converters); the first RTMP reader makes its chunk
 * encoding (`wire`, shared by every other), and for a body that fits one chunk the body becomes a
 * view of the wire's tail, not a second buffer.
 */

t.test('an RTMP packet gets its wire at its first RTMP reader, and its body is a view of it: one buffer per packet', async (t) => {
  const app = await startRtmpApp(t);
  const table = app.service.app.kernel.services.resolve(streamTableRef) as StreamTable;
  publish(t, `${app.base}/live/mem`, { seconds: 30 });
  await waitFor(() => table.get('live/mem') !== undefined, { what: 'the stream published', timeout: 30_000 });
  const seen: FlvPacket[] = [];
  const peer: IngestPeer = { id: 'test-1', protocol: 'test', stream: 'live/mem', remote: '127.0.0.1:1', params: {}, traffic: () => ({ rxBytes: 0, txBytes: 0 }) };
  const r = table.read('live/mem', 'flv', peer, { send: (batch) => { for (const p of batch) if (seen.length < 400) seen.push(p); return true; }, stop: () => {} }, { internal: true });
  t.ok(r.ok, 'a reader attached');
  t.teardown(() => { if (r.ok) r.handle.leave(); });
  await waitFor(() => seen.length >= 60, { what: '60 packets', timeout: 30_000 });
  t.ok(seen.filter((p) => p.type !== 18).every((p) => p.wire === undefined), 'no RTMP encoding while no RTMP player reads');

  const from = seen.length;
  const player = play(t, `${app.base}/live/mem`, { frames: 40 });
  await waitFor(() => player.frames().length >= 20, { what: 'the RTMP player decoding', timeout: 30_000 });
  await waitFor(() => seen.length >= from + 60, { what: '60 more packets', timeout: 30_000 });
  const media = seen.slice(from).filter((p) => p.type !== 18 && p.wire && p.body.length > 0);
  t.ok(media.length > 30, `${media.length} media packets the player was sent have a wire`);
  const shared = media.filter((p) => p.body.buffer === p.wire!.buffer && p.body.byteOffset === p.wire!.byteOffset + p.wire!.length - p.body.length);
  t.equal(shared.length, media.length, 'every body is the tail of its wire (one buffer)');
  t.ok(media.every((p) => p.wire!.subarray(p.wire!.length - p.body.length).equals(p.body)), 'byte for byte');
});
