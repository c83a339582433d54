import t from 'tap';
import { startSrtApp, srtCaller, TOKEN, PASS, type Caller } from './srt-helpers.ts';
import { waitFor } from '../../helpers/wait.ts';
import type { TestApp } from '../../helpers/app.ts';

/*
 * Issue 27 for SRT: lockout after wrong tokens and passphrases, connection caps, stream names,
 * the first-media and idle timeouts, each with the log line naming the peer and the reason.
 * Callers sending from 127.0.0.2 are strangers; 127.0.0.1 is the service's own address.
 */

const STRANGER = '127.0.0.2';

type LogLine = { message: string; reason?: string; why?: string; peer?: string; stream?: string; suppressed?: number };

async function logLines(app: TestApp, message: string): Promise<LogLine[]> {
  const log = (await app.request('GET', '/api/v3/log?format=raw')).body as LogLine[];
  return log.filter((l) => l.message === message);
}

function rejectOf(fn: () => Caller): number | 'accepted' {
  try {
    fn().stop();
    return 'accepted';
  } catch (err) {
    return (err as { reject?: number }).reject ?? -1;
  }
}

const publish = (name: string, token = TOKEN) => `${name},mode:publish,token:${encodeURIComponent(token)}`;

t.test('a wrong token locks the address out for a delay that doubles; the own address never', async (t) => {
  const app = await startSrtApp(t, { fail_delay_ms: 1500, fail_delay_max_ms: 60_000 });
  t.equal(rejectOf(() => srtCaller(app.srtPort, publish('a', 'guess-1'), PASS, STRANGER)), 1401, 'the first guess: unauthorized');
  t.equal(rejectOf(() => srtCaller(app.srtPort, publish('a', 'guess-2'), PASS, STRANGER)), 1402, 'the next one at once: locked out');
  t.equal(rejectOf(() => srtCaller(app.srtPort, publish('a'), PASS, STRANGER)), 1402, 'even with the right token while locked');
  const own = [1, 2, 3].map((i) => rejectOf(() => srtCaller(app.srtPort, publish('b', `guess-${i}`))));
  t.same(own, [1401, 1401, 1401], '127.0.0.1 (the service\'s processes) is never locked out');
  const ok = await waitFor(() => rejectOf(() => srtCaller(app.srtPort, publish('a'), PASS, STRANGER)) === 'accepted', { timeout: 10_000, interval: 250, what: 'lockout over' });
  t.ok(ok, 'after the delay the right token is served');
  const lines = await waitFor(async () => {
    const l = await logLines(app, 'SRT connection refused in the handshake');
    return l.some((x) => x.reason?.includes('locked out')) ? l : undefined;
  }, { what: 'lockout log line' });
  t.match(lines.find((x) => x.reason?.includes('locked out')), { peer: /^127\.0\.0\.2:\d+$/, reason: /^overloaded: locked out/ }, 'the lockout is logged with the peer');
});

t.test('a wrong passphrase is refused, logged and counts toward the lockout', async (t) => {
  const app = await startSrtApp(t, { fail_delay_ms: 60_000 });
  t.not(rejectOf(() => srtCaller(app.srtPort, publish('p'), 'wrong-passphrase-1', STRANGER)), 'accepted', 'wrong passphrase refused');
  await waitFor(async () => (await logLines(app, 'SRT connection refused in the handshake')).find((l) => l.reason === 'badSecret: wrong passphrase' && l.peer?.startsWith(STRANGER)),
    { what: 'passphrase refusal log line' });
  t.equal(rejectOf(() => srtCaller(app.srtPort, publish('p'), PASS, STRANGER)), 1402, 'then the address is locked out, even with the right passphrase');
  t.not(rejectOf(() => srtCaller(app.srtPort, publish('p'), '', STRANGER)), 'accepted', 'no passphrase at all is refused too');
  t.equal(rejectOf(() => srtCaller(app.srtPort, publish('q'))), 'accepted', 'another address is served meanwhile');
});

t.test('connection caps: per address (own address spared) and in total', async (t) => {
  const app = await startSrtApp(t, { max_connections: 4, max_connections_per_address: 2 });
  const held: Caller[] = [];
  t.teardown(() => held.forEach((c) => c.stop()));
  const open = (name: string, from?: string) => {
    try {
      const c = srtCaller(app.srtPort, publish(name), PASS, from);
      held.push(c);
      return 'accepted';
    } catch (err) {
      return (err as { reject?: number }).reject ?? -1;
    }
  };
  t.same([open('s1', STRANGER), open('s2', STRANGER), open('s3', STRANGER)], ['accepted', 'accepted', 1402], 'a third from one stranger is refused');
  t.same([open('o1'), open('o2'), open('o3')], ['accepted', 'accepted', 1402], '127.0.0.1 passes the per-address cap, not the total (4)');
  held.shift()!.stop();
  await waitFor(() => open('s4', STRANGER) === 'accepted', { what: 'room again after a close' });
  const lines = await logLines(app, 'SRT connection refused in the handshake');
  t.ok(lines.some((l) => /max_connections_per_address/.test(l.reason ?? '') && l.peer?.startsWith(STRANGER)), 'per-address refusal logged');
  t.ok(lines.some((l) => /srt\.max_connections\)/.test(l.reason ?? '')), 'total refusal logged');
});

t.test('stream names with control characters or dot segments are refused in the handshake', async (t) => {
  const app = await startSrtApp(t);
  for (const name of ['a%00b', '..', 'live/../x', 'a%2F..%2Fb', 'tab%09x', './y']) {
    t.equal(rejectOf(() => srtCaller(app.srtPort, publish(name))), 1400, `'${name}' refused as a bad request`);
  }
  t.equal(rejectOf(() => srtCaller(app.srtPort, publish('ok.name/x..y'))), 'accepted', "dots inside a segment are a name like any other");
  const lines = await waitFor(async () => {
    const l = (await logLines(app, 'SRT connection refused in the handshake')).filter((x) => x.reason === 'badRequest: invalid stream name');
    return l.length > 0 ? l : undefined;
  }, { what: 'name refusal log line' });
  t.match(lines[0], { peer: /^127\.0\.0\.1:\d+$/ }, 'logged with the peer');
});

t.test('a publisher without media is closed after the handshake timeout, one that stops after the idle timeout', async (t) => {
  const app = await startSrtApp(t, { handshake_timeout_seconds: 1, idle_timeout_seconds: 2 });
  const silent = srtCaller(app.srtPort, publish('silent'));
  t.teardown(() => silent.stop());
  await waitFor(async () => (await logLines(app, 'SRT publisher closed')).find((l) => l.stream === 'silent' && /no media within 1 s/.test(l.why ?? '')), { what: 'silent publisher closed' });

  const stops = srtCaller(app.srtPort, publish('stops'));
  t.teardown(() => stops.stop());
  const packet = Buffer.alloc(188 * 7, 0xff);
  for (let i = 0; i < 7; i++) packet[i * 188] = 0x47;
  const feeding = setInterval(() => stops.send(packet), 50);
  t.teardown(() => clearInterval(feeding));
  await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body.publisher.stops !== undefined, { what: 'feeding publisher listed' });
  await new Promise((r) => setTimeout(r, 2500));
  t.ok((await app.request('GET', '/api/v3/srt')).body.publisher.stops !== undefined, 'a publisher sending media stays past both timeouts');
  clearInterval(feeding);
  await waitFor(async () => (await logLines(app, 'SRT publisher closed')).find((l) => l.stream === 'stops' && /no media for 2 s/.test(l.why ?? '')), { what: 'stopped publisher closed' });
  t.equal((await app.request('GET', '/api/v3/srt')).body.publisher.stops, undefined, 'and it is gone from the listing');
});

t.test('a quiet publisher that is still there answers the liveness probe and stays (issue 44.3)', async (t) => {
  const app = await startSrtApp(t, { idle_timeout_seconds: 10 });
  const quiet = srtCaller(app.srtPort, publish('quiet'));
  t.teardown(() => quiet.stop());
  const packet = Buffer.alloc(188 * 7, 0xff);
  for (let i = 0; i < 7; i++) packet[i * 188] = 0x47;
  const feeding = setInterval(() => quiet.send(packet), 50);
  t.teardown(() => clearInterval(feeding));
  await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body.publisher.quiet !== undefined, { what: 'feeding publisher listed' });
  clearInterval(feeding);
  // its source stalls for 4 s: the probes (one each quiet second) are answered by its libsrt
  await new Promise((r) => setTimeout(r, 4000));
  t.ok((await app.request('GET', '/api/v3/srt')).body.publisher.quiet !== undefined, 'still publishing after 4 s without media');
  t.notOk((await logLines(app, 'SRT publisher closed')).some((l) => l.stream === 'quiet'), 'not closed');
  const again = setInterval(() => quiet.send(packet), 50);
  t.teardown(() => clearInterval(again));
  await new Promise((r) => setTimeout(r, 500));
  t.ok((await app.request('GET', '/api/v3/srt')).body.publisher.quiet !== undefined, 'and its media flows on');
});
