import t from 'tap';
import { Writable } from 'node:stream';
import { readFile } from 'node:fs/promises';
import { pino } from 'pino';
import { ingestHooksRef, type IngestRefusal, type StreamRefusal } from '../../../sdk/index.ts';
import { Streams, type StreamTableLog } from '../../../core/streams/table.ts';
import { SrtRelay, type RelayTable } from '../../../plugins/srt/relay.ts';
import { EventsLog } from '../../../plugins/srt/events-log.ts';
import type { SrtNativeSocket } from '../../../plugins/srt/native.ts';
import { waitFor } from '../../helpers/wait.ts';

/*
 * The relay's fault boundary, in-process: an exception while handling one connection's event
 * (here a native send that throws, and a hook tap that throws in onPublish's end hook) ends that
 * connection with a log line naming its peer, and the relay keeps serving the others. Without the
 * boundary the exception reaches libsrt's event callback and ends the process. The stream table
 * is the core's, linked in-process as the service links it over IPC (host/table-link.ts).
 */

const refusal = (r: StreamRefusal): IngestRefusal => ({ reason: r.reason, kind: r.kind });

type Hooks = ReturnType<typeof ingestHooksRef.create>;

/** The relay's table: the core's stream table (admitting with `hooks`), with the relay's own delivery for its readers. */
function linked(relay: () => SrtRelay, hooks: Hooks, log: StreamTableLog): RelayTable {
  const streams = new Streams({ hooks, log });
  const pubs = new Map<number, (chunk: Buffer) => void>();
  const ends = new Map<string, () => void>();
  return {
    claim: async (peer) => {
      if (peer.mode === 'publish') {
        const r = await streams.publish(peer.stream, 'mpegts', peer);
        if (!r.ok) return refusal(r);
        pubs.set(peer.sock, (c) => r.handle.push(c));
        ends.set(peer.id, () => r.handle.end());
        return undefined;
      }
      const r = await streams.read(peer.stream, 'mpegts', peer, {
        send: (batch) => { for (const c of batch) relay().deliver([peer.sock], c); return true; },
        stop: () => relay().kick(peer.sock, 'publisher gone'),
      });
      if (!r.ok) return refusal(r);
      ends.set(peer.id, () => r.handle.leave());
      return undefined;
    },
    media: (sock, chunk) => pubs.get(sock)?.(chunk),
    release: (peer) => { ends.get(peer.id)?.(); ends.delete(peer.id); pubs.delete(peer.sock); },
  };
}

function newRelay({ hooks, ...opts }: Omit<ConstructorParameters<typeof SrtRelay>[0], 'table' | 'token' | 'events' | 'handshakeMs' | 'idleMs'> & { hooks: Hooks }): SrtRelay {
  const relay: SrtRelay = new SrtRelay({ ...opts, token: '', events: new EventsLog({ enable: false, topics: [] }), handshakeMs: 5000, idleMs: 10_000, table: linked(() => relay, hooks, opts.log) });
  return relay;
}

function capture() {
  const lines: Record<string, unknown>[] = [];
  const out = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
  return { log: pino({ level: 'info' }, out), lines };
}

function fakeNative(sendThrows: () => boolean) {
  const closed: number[] = [];
  const native: SrtNativeSocket = {
    start: () => 0, stop: () => {}, stats: () => null, setPublishers: () => {}, setRuns: () => {}, setUsers: () => {},
    close: (id) => { closed.push(id); },
    send: (_id, data) => { if (sendThrows()) throw new Error('send exploded'); return data.length; },
  };
  return { native, closed };
}

// Recorded with ffmpeg (see mpegts.test.ts): PAT, PMT and H.264 keyframes, so a subscriber starts.
const TS = await readFile(new URL('../../fixtures/srt/h264-aac.mpegts', import.meta.url));
const CHUNK = 7 * 188;

/** Feeds the recording in SRT-sized chunks as one connection's data events. */
function feed(relay: SrtRelay, sock: number): void {
  for (let o = 0; o + CHUNK <= TS.length; o += CHUNK) relay.onEvent('data', sock, '', TS.subarray(o, o + CHUNK), 0, '');
}

t.test('an exception in one connection ends that connection with a log line, never the relay', async (t) => {
  const { log, lines } = capture();
  let explode = false;
  const { native, closed } = fakeNative(() => explode);
  const relay = newRelay({ log, hooks: ingestHooksRef.create() });
  t.teardown(() => relay.close());
  relay.attach(native);
  relay.onEvent('accept', 1, 'one,mode:publish', '203.0.113.7:4000', 0, '');
  relay.onEvent('accept', 2, 'one', '203.0.113.8:4001', 0, '');
  relay.onEvent('accept', 3, 'two,mode:publish', '203.0.113.9:4002', 0, '');
  await waitFor(() => relay.list().subscriber.one?.length === 1, { what: 'subscriber routed' });

  explode = true;
  t.doesNotThrow(() => feed(relay, 1), 'the event handler does not throw when sending to a subscriber fails');
  const failed = await waitFor(() => lines.find((l) => l.msg === 'SRT connection failed: closed'), { what: 'failure log line' });
  t.match(failed, { peer: '203.0.113.8:4001', id: 'srt-2', err: { message: 'send exploded' } }, 'the log line names the subscriber and the reason');
  t.ok(closed.includes(2), 'that connection is closed');
  t.same(relay.list().subscriber.one, undefined, 'and it reads no more');
  t.ok(relay.list().publisher.one !== undefined, 'its publisher goes on');
  t.notOk(closed.includes(1), 'and is not closed');
  explode = false;
  t.doesNotThrow(() => feed(relay, 3), 'another publisher still feeds');
  t.ok(relay.list().publisher.two !== undefined, 'the other publisher is untouched');
  t.notOk(closed.includes(3), 'and not closed');
});

t.test('a throwing end hook tap does not escape the close event', async (t) => {
  const { log, lines } = capture();
  const hooks = ingestHooksRef.create();
  hooks.onPublishEnd.tap('bad', () => { throw new Error('tap exploded'); });
  const { native } = fakeNative(() => false);
  const relay = newRelay({ log, hooks });
  t.teardown(() => relay.close());
  relay.attach(native);
  relay.onEvent('accept', 5, 'x,mode:publish', '198.51.100.1:5000', 0, '');
  await waitFor(() => relay.list().publisher.x !== undefined, { what: 'publisher' });
  t.doesNotThrow(() => relay.onEvent('close', 5, 'broken', '198.51.100.1:5000', 0, ''), 'close with a failing tap');
  t.equal(relay.list().publisher.x, undefined, 'the publisher is gone');
  t.ok(lines.some((l) => /tap failed|connection failed/.test(String(l.msg))), 'the failure is logged');
});

t.test('a malformed accept event (a streamid the hooks choke on) refuses that connection only', async (t) => {
  const { log, lines } = capture();
  const hooks = ingestHooksRef.create();
  hooks.prePublish.tapPromise('bad', async () => { throw new Error('hook exploded'); });
  const { native, closed } = fakeNative(() => false);
  const relay = newRelay({ log, hooks });
  t.teardown(() => relay.close());
  relay.attach(native);
  relay.onEvent('accept', 7, 'y,mode:publish', '198.51.100.2:5000', 0, '');
  await waitFor(() => closed.includes(7), { what: 'refused' });
  t.ok(lines.some((l) => l.msg === 'SRT connection refused' && l.peer === '198.51.100.2:5000'), 'logged with the peer');
});
