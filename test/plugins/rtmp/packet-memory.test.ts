import t from 'tap';
import { streamTableRef, type FlvPacket, type IngestPeer, type StreamTable } from '../../../sdk/index.ts';
import { waitFor } from '../../helpers/wait.ts';
import { publish, startRtmpApp } from './helpers.ts';

/*
 * A published packet costs its bytes once (issue 29's lean aims): the stream table keeps each
 * RTMP packet's chunk encoding (`wire`, shared by every RTMP reader) and its body (for converters),
 * and for a body that fits one chunk the body is a view of the wire's tail, not a second buffer.
 */

t.test('an RTMP packet\'s body is a view of its wire: one buffer per packet', async (t) => {
  const app = await startRtmpApp(t);
  const table = app.service.app.kernel.services.resolve(streamTableRef) as StreamTable;
  publish(t, `${app.base}/live/mem`, { seconds: 20 });
  await waitFor(() => table.get('live/mem') !== undefined, { what: 'the stream published', timeout: 30_000 });
  const seen: FlvPacket[] = [];
  const peer: IngestPeer = { id: 'test-1', protocol: 'test', stream: 'live/mem', remote: '127.0.0.1:1', params: {}, traffic: () => ({ rxBytes: 0, txBytes: 0 }) };
  const r = table.read('live/mem', 'flv', peer, { send: (batch) => { for (const p of batch) if (seen.length < 200) seen.push(p); return true; }, stop: () => {} }, { internal: true });
  t.ok(r.ok, 'a reader attached');
  t.teardown(() => { if (r.ok) r.handle.leave(); });
  await waitFor(() => seen.length >= 100, { what: '100 packets', timeout: 30_000 });
  const media = seen.filter((p) => p.type !== 18 && p.wire && p.body.length > 0);
  t.ok(media.length > 50, `${media.length} media packets with a wire`);
  const shared = media.filter((p) => p.body.buffer === p.wire!.buffer && p.body.byteOffset === p.wire!.byteOffset + p.wire!.length - p.body.length);
  t.equal(shared.length, media.length, 'every body is the tail of its wire (one buffer)');
  t.ok(media.every((p) => p.wire!.subarray(p.wire!.length - p.body.length).equals(p.body)), 'byte for byte');
});
