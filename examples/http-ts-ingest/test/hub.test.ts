import t from 'tap';
import type { IngestPeer } from '@media-core/sdk';
import { StreamHub, type StreamReader } from '../streams.ts';

const peer = (stream: string): IngestPeer => ({ id: stream, protocol: 'httpts', stream, remote: '127.0.0.1:1', params: {}, traffic: () => ({ rxBytes: 0, txBytes: 0 }) });

t.test('a reader whose write or end throws is dropped and reported; the stream and the other readers go on', async (t) => {
  const hub = new StreamHub({ maxStreams: 1 });
  const s = hub.open('a', peer('a'));
  const got: number[] = [];
  const good: StreamReader = { peer: peer('a'), write: (c) => { got.push(c.length); return true; }, end: () => {} };
  const bad: StreamReader = { peer: peer('a'), write: () => { throw new Error('boom'); }, end: () => { throw new Error('end boom'); } };
  hub.attach('a', bad);
  hub.attach('a', good);
  const failed: string[] = [];
  const dropped = hub.push(s, Buffer.alloc(188), (_r, err) => failed.push((err as Error).message));
  t.same(dropped, [bad], 'the throwing reader is dropped');
  t.same(failed, ['boom'], 'and reported');
  hub.push(s, Buffer.alloc(376));
  t.same(got, [188, 376], 'the other reader got every chunk');
  t.same(hub.close(s), [good], 'the stream closes with the reader left');
});
