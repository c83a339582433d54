import t from 'tap';
import { Writable } from 'node:stream';
import { readFile } from 'node:fs/promises';
import { pino, type Logger } from 'pino';
import { ingestHooksRef, type IngestRefusal, type StreamRefusal } from '../../../sdk/index.ts';
import { Streams, type StreamTableLog } from '../../../core/streams/table.ts';
import { SrtRelay, type RelaySockets, type RelayTable } from '../../../plugins/srt/relay.ts';
import { EventsLog } from '../../../plugins/srt/events-log.ts';
import { waitFor } from '../../helpers/wait.ts';

/*
 * The relay's fault boundary, in-process: an exception while handling one connection's event
 * (here the table's intake that throws for one publisher, and a hook tap that throws in
 * onPublish's end hook) ends that connection with a log line naming its peer, and the relay keeps
 * serving the others. Without the boundary the exception reaches the host pipe's reader and ends
 * the service. The stream table is the core's, linked in-process as host/table-link.ts links it.
 */

const refusal = (r: StreamRefusal): IngestRefusal => ({ reason: r.reason, kind: r.kind });

type Hooks = ReturnType<typeof ingestHooksRef.create>;

/** The relay's table: the core's stream table (admitting with `hooks`); `explode` makes one publisher's intake throw. */
function linked(relay: () => SrtRelay, hooks: Hooks, log: StreamTableLog, explode: (sock: number) => boolean, delivered: number[]): RelayTable {
  const streams = new Streams({ hooks, log });
  const pubs = new Map<number, (chunk: Buffer) => void>();
  const ends = new Map<string, () => void>();
  return {
    claim: async (peer) => {
      if (peer.mode === 'publish') {
        const r = await streams.publish(peer.stream, 'mpegts', peer);
        if (!r.ok) return refusal(r);
        pubs.set(peer.sock, (c) => { if (explode(peer.sock)) throw new Error('intake exploded'); r.handle.push(c); });
        ends.set(peer.id, () => r.handle.end());
        return undefined;
      }
      const r = await streams.read(peer.stream, 'mpegts', peer, {
        send: (batch) => { for (const c of batch) delivered.push(peer.sock, c.length); return true; },
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

function newRelay(log: Logger, hooks: Hooks, explode: (sock: number) => boolean = () => false) {
  const closed: number[] = [];
  const watched: number[] = [];
  const delivered: number[] = [];
  const sockets: RelaySockets = { close: (s) => { closed.push(s); }, watch: (s) => { watched.push(s); } };
  const relay: SrtRelay = new SrtRelay({
    log, token: '', events: new EventsLog({ enable: false, topics: [] }), sockets, table: linked(() => relay, hooks, log, explode, delivered),
  });
  return { relay, closed, watched, delivered };
}

function capture() {
  const lines: Record<string, unknown>[] = [];
  const out = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk))); done(); } });
  return { log: pino({ level: 'info' }, out), lines };
}

// Recorded with ffmpeg (see mpegts.test.ts): PAT, PMT and H.264 keyframes, so a subscriber starts.
const TS = await readFile(new URL('../../fixtures/srt/h264-aac.mpegts', import.meta.url));
const CHUNK = 7 * 188;

/** Feeds the recording in SRT-sized chunks as one connection's PUBLISHED frames. */
function feed(relay: SrtRelay, sock: number): void {
  for (let o = 0; o + CHUNK <= TS.length; o += CHUNK) relay.data(sock, TS.subarray(o, o + CHUNK));
}

t.test('an exception in one connection ends that connection with a log line, never the relay', async (t) => {
  const { log, lines } = capture();
  let explode = false;
  const { relay, closed, watched, delivered } = newRelay(log, ingestHooksRef.create(), (sock) => explode && sock === 1);
  t.teardown(() => relay.endAll('test over'));
  relay.accepted(1, 'one,mode:publish', '203.0.113.7:4000');
  relay.accepted(2, 'one', '203.0.113.8:4001');
  relay.accepted(3, 'two,mode:publish', '203.0.113.9:4002');
  relay.accepted(4, 'two', '203.0.113.10:4003');
  await waitFor(() => relay.list({}).subscriber.two?.length === 1 && relay.list({}).subscriber.one?.length === 1, { what: 'subscribers routed' });
  t.same(watched.sort(), [1, 3], 'the host is asked to watch each claimed publisher');

  explode = true;
  t.doesNotThrow(() => feed(relay, 1), 'the event handler does not throw when the intake of one publisher fails');
  const failed = await waitFor(() => lines.find((l) => l.msg === 'SRT connection failed: closed'), { what: 'failure log line' });
  t.match(failed, { peer: '203.0.113.7:4000', id: 'srt-1', err: { message: 'intake exploded' } }, 'the log line names the publisher and the reason');
  t.ok(closed.includes(1), 'that connection is closed');
  t.same(relay.list({}).publisher.one, undefined, 'and it publishes no more');
  t.ok(closed.includes(2), 'its reader is closed with its stream');
  t.doesNotThrow(() => feed(relay, 3), 'another publisher still feeds');
  t.ok(relay.list({}).publisher.two !== undefined, 'the other publisher is untouched');
  t.notOk(closed.includes(3), 'and not closed');
  t.ok(delivered.includes(4), 'and its reader is served');
});

t.test('a throwing end hook tap does not escape the close event', async (t) => {
  const { log, lines } = capture();
  const hooks = ingestHooksRef.create();
  hooks.onPublishEnd.tap('bad', () => { throw new Error('tap exploded'); });
  const { relay } = newRelay(log, hooks);
  t.teardown(() => relay.endAll('test over'));
  relay.accepted(5, 'x,mode:publish', '198.51.100.1:5000');
  await waitFor(() => relay.list({}).publisher.x !== undefined, { what: 'publisher' });
  t.doesNotThrow(() => relay.closed(5, 'broken', false, 0, 0), 'close with a failing tap');
  t.equal(relay.list({}).publisher.x, undefined, 'the publisher is gone');
  t.ok(lines.some((l) => /tap failed|connection failed/.test(String(l.msg))), 'the failure is logged');
});

t.test('a malformed accept event (a streamid the hooks choke on) refuses that connection only', async (t) => {
  const { log, lines } = capture();
  const hooks = ingestHooksRef.create();
  hooks.prePublish.tapPromise('bad', async () => { throw new Error('hook exploded'); });
  const { relay, closed } = newRelay(log, hooks);
  t.teardown(() => relay.endAll('test over'));
  relay.accepted(7, 'y,mode:publish', '198.51.100.2:5000');
  await waitFor(() => closed.includes(7), { what: 'refused' });
  t.ok(lines.some((l) => l.msg === 'SRT connection refused' && l.peer === '198.51.100.2:5000'), 'logged with the peer');
});

t.test('a connection the host closed is told with why (its media watch, a too slow subscriber)', async (t) => {
  const { log, lines } = capture();
  const { relay } = newRelay(log, ingestHooksRef.create());
  t.teardown(() => relay.endAll('test over'));
  relay.accepted(8, 'z,mode:publish', '198.51.100.3:5000');
  await waitFor(() => relay.list({}).publisher.z !== undefined, { what: 'publisher' });
  feed(relay, 8);
  relay.closed(8, 'no media for 10 s', true, 0, 0);
  t.match(lines.find((l) => l.msg === 'SRT publisher closed'), { id: 'srt-8', why: 'no media for 10 s' }, 'a warn line with the host\'s reason');
  t.match(lines.find((l) => l.msg === 'SRT publisher ended'), { rxBytes: TS.length - (TS.length % CHUNK) }, 'and its end with the bytes received');
});

t.test('a second accept of a live socket (a host gone wrong) does not replace its connection', async (t) => {
  const { log } = capture();
  const { relay, closed } = newRelay(log, ingestHooksRef.create());
  t.teardown(() => relay.endAll('test over'));
  relay.accepted(9, 'first,mode:publish', '198.51.100.4:5000');
  await waitFor(() => relay.list({}).publisher.first !== undefined, { what: 'publisher' });
  relay.accepted(9, 'second,mode:publish', '198.51.100.4:5000');
  await new Promise((r) => setTimeout(r, 50));
  t.same(Object.keys(relay.list({}).publisher), ['first'], 'the first claim stands, no second one');
  relay.closed(9, 'closed', false, 0, 0);
  t.same(relay.list({}).publisher, {}, 'and it ends with its socket');
  t.same(closed, [], 'nothing closed on the host\'s behalf');
});
