import t from 'tap';
import { ingestHooksRef, refusalCode, type IngestPeer, type IngestTraffic, type StreamSink } from '../../../sdk/index.ts';
import { Streams } from '../../../core/streams/table.ts';

/*
 * The table admits (issue 45.1): a client's publish and read run the ingest hooks (pre, on once
 * accepted or announced, the end hook once with its traffic), a refusal of either kind comes back
 * as one StreamRefusal with its family's code, an internal caller skips the hooks, and a reload
 * (rebind + announce) counts bytes from the announce on.
 */

let seq = 0;
const peer = (traffic: IngestTraffic = { rxBytes: 0, txBytes: 0 }, stream = 's'): IngestPeer => ({
  id: `p-${++seq}`, protocol: 'test', stream, remote: '127.0.0.1:1', params: {}, traffic: () => ({ ...traffic }),
});
const sink = (): StreamSink<'mpegts'> => ({ send: () => true, stop: () => {} });

function recorded() {
  const hooks = ingestHooksRef.create();
  const seen: string[] = [];
  hooks.prePublish.tapPromise('t', async (p) => { seen.push(`prePublish ${p.stream}`); return p.stream === 'no' ? { reason: 'closed', kind: 'unauthorized' } : undefined; });
  hooks.prePlay.tapPromise('t', async (p) => { seen.push(`prePlay ${p.stream}`); return undefined; });
  hooks.onPublish.tap('t', (p) => { seen.push(`onPublish ${p.stream}`); });
  hooks.onPlay.tap('t', (p) => { seen.push(`onPlay ${p.stream}`); });
  hooks.onPublishEnd.tap('t', (p, tr) => { seen.push(`onPublishEnd ${p.stream} ${tr.rxBytes}`); });
  hooks.onPlayEnd.tap('t', (p, tr) => { seen.push(`onPlayEnd ${p.stream} ${tr.txBytes}`); });
  return { hooks, seen };
}

t.test('a client publish and read run the hooks once each; internal ones run none', async (t) => {
  const { hooks, seen } = recorded();
  const table = new Streams({ hooks });
  const traffic = { rxBytes: 10, txBytes: 0 };
  const pub = await table.publish('s', 'mpegts', peer(traffic));
  if (!pub.ok) throw new Error(pub.reason);
  const rt = { rxBytes: 0, txBytes: 7 };
  const read = await table.read('s', 'mpegts', peer(rt), sink());
  if (!read.ok) throw new Error(read.reason);
  const inner = table.read('s', 'mpegts', peer(), sink(), { internal: true });
  t.ok(inner.ok, 'an internal reader is answered at once');
  read.handle.leave();
  read.handle.leave();
  if (inner.ok) inner.handle.leave();
  traffic.rxBytes = 25;
  pub.handle.end();
  pub.handle.end();
  t.same(seen, ['prePublish s', 'onPublish s', 'prePlay s', 'onPlay s', 'onPlayEnd s 7', 'onPublishEnd s 25'], 'each hook once, the end hooks with the traffic; none for the internal reader');
});

t.test('refusals: a tap\'s and the table\'s, each with its family\'s code', async (t) => {
  const { hooks, seen } = recorded();
  const table = new Streams({ hooks });
  const tap = await table.publish('no', 'mpegts', peer(undefined, 'no'));
  t.match(tap, { ok: false, code: 'STREAM_REFUSED', kind: 'unauthorized', reason: 'closed' });
  if (!tap.ok) t.same([refusalCode(tap, 'http'), refusalCode(tap, 'srt')], [401, 1401]);
  const first = await table.publish('s', 'mpegts', peer());
  t.ok(first.ok);
  const busy = await table.publish('s', 'mpegts', peer());
  t.match(busy, { ok: false, code: 'STREAM_BUSY', kind: 'conflict' });
  if (!busy.ok) t.same([refusalCode(busy, 'http'), refusalCode(busy, 'srt')], [409, 1409]);
  const none = await table.read('nothing', 'mpegts', peer(undefined, 'nothing'), sink());
  t.match(none, { ok: false, code: 'STREAM_NOT_FOUND', kind: 'not_found' });
  t.same(seen.filter((s) => s.startsWith('prePublish')), ['prePublish no', 'prePublish s'], 'a busy name is refused before the hooks');
  t.notOk(seen.some((s) => s.startsWith('onPublish no') || s.startsWith('onPlay nothing')), 'a refused peer gets no on hook');
});

t.test('a client gone while admitted claims nothing; a slow tap is refused at the timeout', async (t) => {
  const hooks = ingestHooksRef.create();
  let open!: () => void;
  hooks.prePublish.tapPromise('t', () => new Promise((r) => { open = () => r(undefined); }));
  const told: string[] = [];
  hooks.onPublish.tap('t', () => { told.push('onPublish'); });
  const table = new Streams({ hooks });
  const gone = new AbortController();
  const pending = table.publish('s', 'mpegts', peer(), { signal: gone.signal });
  gone.abort();
  open();
  t.match(await pending, { ok: false, code: 'STREAM_GONE' });
  t.equal(table.get('s'), undefined, 'nothing claimed');
  const slow = await table.publish('s', 'mpegts', peer(), { checkTimeoutMs: 20 });
  t.match(slow, { ok: false, code: 'STREAM_REFUSED', kind: 'overloaded' });
  open();
  t.same(told, [], 'no hook told');
});

t.test('announce later, and again after a reload: bytes from then on, to the app then running', async (t) => {
  const a = recorded();
  const table = new Streams({ hooks: a.hooks });
  const traffic = { rxBytes: 5, txBytes: 0 };
  const pub = await table.publish('s', 'mpegts', peer(traffic), { announce: 'later' });
  if (!pub.ok) throw new Error(pub.reason);
  t.same(a.seen, ['prePublish s'], 'not announced yet');
  pub.handle.announce();
  traffic.rxBytes = 50;
  const b = recorded();
  table.rebind({ hooks: b.hooks });
  pub.handle.announce();
  traffic.rxBytes = 80;
  pub.handle.end();
  t.same(a.seen, ['prePublish s', 'onPublish s'], 'the first app: the announce');
  t.same(b.seen, ['onPublish s', 'onPublishEnd s 30'], 'the app after the reload: the re-announce and the end, bytes since');
});

t.test('a viewer a plugin serves from its own reader (admit): prePlay, onPlay at announce, onPlayEnd once at leave; not a reader', async (t) => {
  const { hooks, seen } = recorded();
  const table = new Streams({ hooks });
  const pub = table.publish('s', 'mpegts', peer(), { internal: true });
  if (!pub.ok) throw new Error(pub.reason);
  const traffic = { rxBytes: 0, txBytes: 3 };
  const a = await table.admit(peer(traffic), { announce: 'later' });
  if (!a.ok) throw new Error(a.reason);
  t.same(seen, ['prePlay s'], 'checked; not told before its media connects');
  t.equal(table.get('s')?.readers.length, 0, 'no reader of the table');
  a.handle.announce();
  traffic.txBytes = 9;
  a.handle.leave();
  a.handle.leave();
  t.same(seen, ['prePlay s', 'onPlay s', 'onPlayEnd s 9'], 'each once');
  const never = await table.admit(peer(), { announce: 'later' });
  if (never.ok) never.handle.leave();
  t.same(seen.slice(3), ['prePlay s'], 'one that left before it was announced ends with no hook');
  hooks.prePlay.tapPromise('no', async () => ({ reason: 'nope', kind: 'forbidden' }));
  const no = await table.admit(peer());
  t.match(no, { ok: false, code: 'STREAM_REFUSED', kind: 'forbidden' });
  pub.handle.end();
});
