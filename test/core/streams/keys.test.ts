import t from 'tap';
import { ingestHooksRef, refusalCode, type IngestPeer, type StreamSink } from '../../../sdk/index.ts';
import { Streams } from '../../../core/streams/table.ts';

/*
 * Issue 49.3, a user's key decided once, in the table's admission, for every protocol: a peer
 * with a `key` is admitted only when an access plugin's `decideKey` tap allows it (before the
 * `pre*` taps, and before the table says whether the name is busy or bad); without a tap it is a
 * wrong token; a tap that throws refuses; `keyRefusal` answers the same rule alone (for a
 * protocol that answers a key before any work, or again after a reload).
 */

let seq = 0;
const peer = (stream: string, key?: string): IngestPeer => ({
  id: `p-${++seq}`, protocol: 'test', stream, remote: '127.0.0.1:1', params: {}, ...(key === undefined ? {} : { key }), traffic: () => ({ rxBytes: 0, txBytes: 0 }),
});
const sink = (): StreamSink<'mpegts'> => ({ send: () => true, stop: () => {} });

t.test('no access plugin: a key is a wrong token', async (t) => {
  const table = new Streams({ hooks: ingestHooksRef.create() });
  const r = await table.publish('a', 'mpegts', peer('a', 'u:k'));
  t.match(r, { ok: false, kind: 'unauthorized', reason: 'invalid token', code: 'STREAM_REFUSED' });
  t.equal(refusalCode(r as never, 'srt'), 1401);
  t.ok((await table.publish('a', 'mpegts', peer('a'))).ok, 'a peer without a key as before');
});

t.test('the tap decides, first of all', async (t) => {
  const hooks = ingestHooksRef.create();
  const asked: string[] = [];
  hooks.decideKey.tap('iam', (p, role) => {
    asked.push(`${role} ${p.stream}`);
    if (p.key === 'bad') throw new Error('boom');
    return p.key === 'u:ok' ? true : { reason: `user u may not ${role} ${p.stream}`, kind: p.key === 'u:wrong' ? 'unauthorized' : 'forbidden' };
  });
  hooks.prePublish.tapPromise('t', async (p) => { asked.push(`prePublish ${p.stream}`); return undefined; });
  hooks.prePlay.tapPromise('t', async (p) => { asked.push(`prePlay ${p.stream}`); return undefined; });
  const table = new Streams({ hooks });

  const ok = await table.publish('live', 'mpegts', peer('live', 'u:ok'));
  t.ok(ok.ok, 'allowed');
  t.same(asked.splice(0), ['publish live', 'prePublish live'], 'the key before the prePublish taps, once');
  const busy = await table.publish('live', 'mpegts', peer('live', 'u:no'));
  t.match(busy, { ok: false, kind: 'forbidden', reason: 'user u may not publish live' }, 'a refused key learns nothing of the busy name');
  t.match(await table.publish('bad name/../x', 'mpegts', peer('bad name/../x', 'u:wrong')), { kind: 'unauthorized' }, 'nor of a bad one');
  t.match(await table.read('live', 'mpegts', peer('live', 'u:no'), sink()), { ok: false, kind: 'forbidden' }, 'a read');
  t.match(await table.read('gone', 'mpegts', peer('gone', 'u:no'), sink(), { demandWaitMs: 0 }), { kind: 'forbidden' }, 'a read of a name not live: the key first');
  t.ok((await table.read('live', 'mpegts', peer('live', 'u:ok'), sink())).ok, 'an allowed read');
  t.match(await table.admit(peer('live', 'u:no')), { ok: false, kind: 'forbidden' }, 'an audience (WebRTC, LL-HLS viewers)');
  t.match(await table.publish('x', 'mpegts', peer('x', 'bad')), { ok: false, kind: 'forbidden', reason: /the key check failed: boom/ }, 'a throwing tap refuses');
  t.equal(table.keyRefusal(peer('live', 'u:ok'), 'play'), undefined, 'keyRefusal: allowed');
  t.match(table.keyRefusal(peer('live', 'u:wrong'), 'play'), { kind: 'unauthorized' }, 'keyRefusal: refused');
  t.equal(table.keyRefusal(peer('live'), 'play'), undefined, 'no key: nothing to decide');
});
