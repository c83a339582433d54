import t from 'tap';
import { readFile } from 'node:fs/promises';
import type { FlvPacket, IngestPeer, StreamFormat, StreamPacket, StreamSink, StreamStopReason } from '../../../sdk/index.ts';
import { Streams } from '../../../core/streams/table.ts';
import type { StreamConverter } from '../../../core/streams/converters.ts';
import { TS_PACKET, isRandomAccess, pidOf } from '../../../core/streams/mpegts.ts';

/*
 * The stream table in-process: names, start rules, fan-out, drops, conversion, ends. No sockets:
 * sinks are arrays, so every assertion is on exactly what a reader was handed.
 */

const TS = await readFile(new URL('../../fixtures/srt/h264-aac.mpegts', import.meta.url));

let seq = 0;
const peer = (protocol = 'rtmp'): IngestPeer => ({
  id: `p-${++seq}`, protocol, stream: 's', remote: '127.0.0.1:1', params: {}, traffic: () => ({ rxBytes: 0, txBytes: 0 }),
});

/** A reader that keeps what it is sent; `fail` makes its next send refuse (or throw). */
class Sink<F extends StreamFormat> implements StreamSink<F> {
  batches: Array<readonly StreamPacket<F>[]> = [];
  stopped: StreamStopReason[] = [];
  fail: 'no' | 'refuse' | 'throw' = 'no';
  send(batch: readonly StreamPacket<F>[]): boolean {
    if (this.fail === 'throw') throw new Error('reader broke');
    if (this.fail === 'refuse') return false;
    this.batches.push(batch);
    return true;
  }
  stop(reason: StreamStopReason): void {
    this.stopped.push(reason);
  }
  get packets(): StreamPacket<F>[] {
    return this.batches.flat();
  }
}

const flv = (kind: FlvPacket['kind'], i = 0): FlvPacket =>
  ({ kind, type: kind === 'metadata' ? 18 : kind === 'audio-header' ? 8 : 9, codec: kind === 'audio-header' ? 10 : 7, timestamp: i, body: Buffer.from([i]) });
const tick = () => new Promise((r) => process.nextTick(r));

function published<F extends StreamFormat>(table: Streams, name: string, format: F, protocol = 'rtmp') {
  const r = table.publish(name, format, peer(protocol), { internal: true });
  if (!r.ok) throw new Error(r.reason);
  return r.handle;
}

t.test('one publisher per name; names are checked; per-protocol stream limit', async (t) => {
  const table = new Streams();
  const pub = published(table, 'live/a', 'flv');
  t.match(table.publish('live/a', 'mpegts', peer('srt'), { internal: true }), { ok: false, code: 'STREAM_BUSY', kind: 'conflict' }, 'a second publisher, any protocol, is refused');
  t.match(table.publish('/live/b', 'flv', peer(), { internal: true }), { ok: false, code: 'STREAM_BAD_NAME' }, 'a leading / is not a table name');
  t.match(table.publish('', 'flv', peer(), { internal: true }), { ok: false, code: 'STREAM_BAD_NAME' });
  // one name rule (sdk/stream-name.ts): all of it for a client, what every kept name needs for the service's own
  for (const bad of ['live/../x', 'a b', 'x#y', 'back\\slash']) {
    t.match(await table.publish(bad, 'flv', peer('srt')), { ok: false, code: 'STREAM_BAD_NAME' }, `a client's ${JSON.stringify(bad)}`);
  }
  t.ok(table.publish('my cam', 'flv', peer('playout'), { internal: true }).ok, 'an internal publisher\'s name may hold a space (a process id)');
  t.match(table.publish('a\u0001b', 'flv', peer(), { internal: true }), { ok: false, code: 'STREAM_BAD_NAME' }, 'no kept name has control characters');
  t.match(table.publish('x'.repeat(1025), 'flv', peer(), { internal: true }), { ok: false, code: 'STREAM_BAD_NAME' });
  published(table, 'x', 'mpegts', 'httpts');
  t.match(table.publish('y', 'mpegts', peer('httpts'), { internal: true, maxStreamsOfProtocol: 1 }), { ok: false, code: 'STREAM_LIMIT' }, 'max streams of the protocol');
  t.ok(table.publish('y', 'mpegts', peer('srt'), { internal: true, maxStreamsOfProtocol: 1 }).ok, 'other protocols\' streams do not count');
  t.match(table.read('nobody', 'flv', peer(), new Sink<'flv'>(), { internal: true }), { ok: false, code: 'STREAM_NOT_FOUND', kind: 'not_found' });
  t.same(table.list('httpts').map((s) => s.name), ['x']);
  t.same(table.list(['rtmp', 'rtmps']).map((s) => s.name), ['live/a']);
  pub.end();
  t.ok(table.publish('live/a', 'flv', peer(), { internal: true }).ok, 'the name is free once its publisher ended');
});

t.test('reader limit of a stream', async (t) => {
  const table = new Streams();
  const r = table.publish('s', 'flv', peer(), { internal: true, maxReaders: 1 });
  t.ok(r.ok);
  t.ok(table.read('s', 'flv', peer(), new Sink<'flv'>(), { internal: true }).ok);
  t.match(table.read('s', 'flv', peer(), new Sink<'flv'>(), { internal: true }), { ok: false, code: 'STREAM_LIMIT', kind: 'overloaded' });
});

t.test('flv: a late reader starts with metadata, headers and the GOP; packets go per tick, shared', async (t) => {
  const table = new Streams();
  const pub = published(table, 's', 'flv');
  const early = new Sink<'flv'>();
  t.ok(table.read('s', 'flv', peer(), early, { internal: true }).ok);
  const meta = flv('metadata'), vh = flv('video-header'), ah = flv('audio-header');
  const before = flv('frame', 1), key = flv('keyframe', 2), f3 = flv('frame', 3);
  t.same(table.get('s')?.media, { video: false, audio: false, known: false }, 'no media known before the headers');
  pub.push(meta);
  pub.push(vh);
  t.same(table.get('s')?.media, { video: true, audio: false, known: false }, 'video seen; audio may still come');
  for (const p of [ah, before, key, f3]) pub.push(p);
  t.same(table.get('s')?.media, { video: true, audio: true, known: true }, 'both headers: known');
  t.same(early.batches.length, 1, 'the early reader\'s start (empty) only: packets wait for the tick');
  await tick();
  t.equal(early.batches.length, 2, 'one batch per tick');
  t.ok(early.batches[1]!.every((p, i) => p === [meta, vh, ah, before, key, f3][i]), 'the publisher\'s own packets, in order');
  const late = new Sink<'flv'>();
  t.ok(table.read('s', 'flv', peer(), late, { internal: true }).ok);
  t.same(late.batches.length, 1, 'the start comes at once');
  t.ok([meta, vh, ah, key, f3].every((p, i) => late.batches[0]![i] === p) && late.batches[0]!.length === 5,
    'metadata, video and audio headers (video is track #0), then the GOP from the keyframe (the frame before it left out)');
  const f4 = flv('frame', 4);
  pub.push(f4);
  await tick();
  t.equal(early.batches[2]![0], late.batches[1]![0], 'both readers got the same packet object');
  t.same(table.get('s')?.videoCodec, 7);
});

t.test('mpegts: a reader starts with PAT/PMT at the next video random access point', async (t) => {
  const table = new Streams();
  const pub = published(table, 's', 'mpegts', 'srt');
  const chunks: Buffer[] = [];
  for (let o = 0; o + 7 * TS_PACKET <= TS.length; o += 7 * TS_PACKET) chunks.push(TS.subarray(o, o + 7 * TS_PACKET));
  const first = new Sink<'mpegts'>();
  t.ok(table.read('s', 'mpegts', peer(), first, { internal: true }).ok);
  t.same(table.get('s')?.media, { video: false, audio: false, known: false }, 'nothing known before the PMT');
  pub.push(chunks[0]!);
  t.equal(first.packets[0], chunks[0], 'a reader there before the first PAT gets the stream from its start');
  t.same(table.get('s')?.media, { video: true, audio: true, known: true }, 'the PMT lists H.264 and AAC: known at once');
  // feed past the first random access point, then a new reader joins
  let i = 1;
  for (; i < chunks.length / 3; i++) pub.push(chunks[i]!);
  const late = new Sink<'mpegts'>();
  t.ok(table.read('s', 'mpegts', peer(), late, { internal: true }).ok);
  t.equal(late.batches.length, 0, 'a late reader waits');
  for (; i < chunks.length && late.batches.length === 0; i++) pub.push(chunks[i]!);
  t.equal(late.batches.length, 1, 'it starts at a random access point');
  const [pat, ...rest] = late.batches[0]!;
  t.equal(pidOf(pat!, 0), 0, 'with the PAT first');
  const media = rest[rest.length - 1]!;
  t.ok(isRandomAccess(media, 0), 'the chunk is cut at the random access point');
  pub.push(chunks[i]!);
  t.equal(late.packets.at(-1), chunks[i], 'then every chunk, as is');
  t.equal(first.packets.at(-1), chunks[i], 'the same Buffer for every reader');
});

t.test('a slow or throwing reader is dropped, never the publisher or the others', async (t) => {
  const table = new Streams();
  const pub = published(table, 's', 'mpegts', 'httpts');
  const slow = new Sink<'mpegts'>(), broken = new Sink<'mpegts'>(), good = new Sink<'mpegts'>();
  for (const s of [slow, broken, good]) t.ok(table.read('s', 'mpegts', peer(), s, { internal: true }).ok);
  slow.fail = 'refuse';
  broken.fail = 'throw';
  t.doesNotThrow(() => pub.push(Buffer.alloc(TS_PACKET)), 'the publisher\'s push does not throw');
  t.same([slow.stopped, broken.stopped, good.stopped], [['dropped'], ['dropped'], []], 'both dropped, told once');
  pub.push(Buffer.alloc(TS_PACKET));
  t.equal(good.packets.length, 2, 'the good reader got every packet');
  t.equal(pub.readers, 1);
});

t.test('the publisher\'s end stops every reader, of every format, and unlists the stream', async (t) => {
  const table = new Streams({ converters: { 'mpegts->flv': () => new StandInTsToFlv() } });
  const names: string[][] = [];
  table.onChange((n) => names.push([...n]));
  const pub = published(table, 's', 'mpegts', 'srt');
  const ts = new Sink<'mpegts'>(), fl = new Sink<'flv'>();
  t.ok(table.read('s', 'mpegts', peer(), ts, { internal: true }).ok);
  t.ok(table.read('s', 'flv', peer(), fl, { internal: true }).ok);
  const left = new Sink<'mpegts'>();
  const r = table.read('s', 'mpegts', peer(), left, { internal: true });
  if (r.ok) r.handle.leave();
  pub.end();
  t.same([ts.stopped, fl.stopped, left.stopped], [['ended'], ['ended'], []], 'readers stopped once; one that left is not told');
  t.equal(table.get('s'), undefined);
  t.same(names, [['s'], []], 'change listeners told of the start and the end');
  pub.push(Buffer.alloc(TS_PACKET));
  t.equal(ts.packets.length, 0, 'a push after the end goes nowhere');
});

/**
 * A STAND-IN converter (not the real remux): each TS chunk becomes one FLV `frame` whose body is
 * the chunk, the first one a `keyframe`, so the table's conversion plumbing can be tested alone.
 */
class StandInTsToFlv implements StreamConverter<'mpegts', 'flv'> {
  made = 0;
  constructor(onMade?: () => void) {
    onMade?.();
  }
  push(chunk: Buffer): FlvPacket[] {
    if (chunk[0] === 0xff) throw new Error('stand-in converter cannot read this');
    return [{ kind: this.made++ === 0 ? 'keyframe' : 'frame', type: 9, codec: 7, timestamp: this.made, body: chunk }];
  }
}

t.test('cross-format: one converter per stream and format, shared; its failure ends only its readers', async (t) => {
  let converters = 0;
  const table = new Streams({ converters: { 'mpegts->flv': () => new StandInTsToFlv(() => converters++) } });
  const pub = published(table, 's', 'mpegts', 'srt');
  const a = new Sink<'flv'>(), b = new Sink<'flv'>(), ts = new Sink<'mpegts'>();
  t.ok(table.read('s', 'flv', peer(), a, { internal: true }).ok);
  t.ok(table.read('s', 'flv', peer(), b, { internal: true }).ok);
  t.ok(table.read('s', 'mpegts', peer(), ts, { internal: true }).ok);
  t.equal(converters, 1, 'one converter for both flv readers');
  pub.push(Buffer.alloc(TS_PACKET, 1));
  await tick();
  t.equal(a.packets.length, 1);
  t.equal(a.packets[0], b.packets[0], 'the converted packet is shared');
  t.same(table.get('s')?.readers.map((r) => r.format).sort(), ['flv', 'flv', 'mpegts']);
  pub.push(Buffer.alloc(TS_PACKET, 0xff));
  await tick();
  t.same([a.stopped, b.stopped], [['dropped'], ['dropped']], 'a converter that throws drops its readers');
  t.same(ts.stopped, [], 'the publisher\'s own format goes on');
  pub.push(Buffer.alloc(TS_PACKET, 2));
  t.equal(ts.packets.length, 3);
  t.match(table.read('s', 'flv', peer(), new Sink<'flv'>(), { internal: true }), { ok: false, code: 'STREAM_FORMAT_UNAVAILABLE' }, 'the failed format is refused from then on');
});

t.test('no converter: a reader of another format is refused with "format not available"', async (t) => {
  const table = new Streams();
  published(table, 's', 'flv');
  const r = table.read('s', 'mpegts', peer('srt'), new Sink<'mpegts'>(), { internal: true });
  t.match(r, { ok: false, code: 'STREAM_FORMAT_UNAVAILABLE', reason: /format not available/ });
});
