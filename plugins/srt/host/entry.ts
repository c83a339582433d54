import { Socket } from 'node:net';
import type { IngestPeer, IngestRefusal } from '../../../sdk/ingest.ts';
import { loadAddon, versionString, type SrtNativeSocket } from '../native.ts';
import { SrtRelay, type RelayTable } from '../relay.ts';
import { DELIVER, PipeDrops, PUBLISHED, readFrames, writeFrame } from './media-pipe.ts';
import { EventsLog } from '../events-log.ts';
import type { SrtLog } from '../refusal-log.ts';
import type { FromHost, HostOptions, LogLevel, PeerData, ToHost } from './protocol.ts';
import type { SrtRun } from '../run-scope.ts';

/*
 * The SRT host process: libsrt (through the addon) and the relay run here, apart from the
 * service, so that a fault inside libsrt (a crash on a malformed packet, found by the fuzz suite
 * in libsrt 1.5.1) ends this process and its SRT connections, never the service. The service
 * (host.ts) starts it through the children service (confined like every child), admits its
 * connections in the stream table (the ingest hooks run there), holds the stream table (publishers' chunks go there over the media pipe, fd 4,
 * and the table's chunks come back for the subscribers), takes the log lines and the traffic
 * counts, and starts it again after a fault.
 */

/** Room for addon events on their way to JS; beyond it media is dropped (and counted). */
const EVENT_QUEUE = 4096;
/** libsrt's receive latency for accepted sockets (ms); callers may ask for more. */
const LATENCY_MS = 120;
/** How often the traffic of live peers goes to the service (its sessions poll once a second). */
const TRAFFIC_MS = 1000;
/** Quiet time after connections left before their memory goes back (issue 46.2). */
const GIVE_BACK_MS = 5000;

const send = (m: FromHost) => { if (process.connected) process.send!(m); };
/** A host that cannot listen says why, then goes (the service decides whether to start another). */
const fail = (m: FromHost) => { if (process.connected) process.send!(m, () => process.exit(1)); else process.exit(1); };

/** Errors as data (an Error does not survive the IPC channel's JSON). */
function plain(fields: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) out[k] = v instanceof Error ? { type: v.name, message: v.message, stack: v.stack } : v;
  return out;
}

/** The relay's log: each line goes to the service, which writes it into its own log. */
const line = (level: LogLevel) => (fields: object, msg: string) => send({ t: 'log', level, fields: plain(fields), msg });
const log: SrtLog = { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };

const claims = new Map<number, (refusal: IngestRefusal | undefined) => void>();
/** Media to and from the service (fd 4 of the stdio the service gave). */
const media = new Socket({ fd: 4, readable: true, writable: true });
media.on('error', (err) => log.warn({ err: err.message }, 'the SRT host media pipe failed'));
let seq = 0;
/** The claimed connections, whose traffic the service's hooks poll. */
const live = new Map<string, IngestPeer>();
let native: SrtNativeSocket | undefined;
let relay: SrtRelay | undefined;
/** The children's run credentials: token -> the `<mode> <resource>` it admits (the relay checks again). */
let runs = new Map<string, ReadonlySet<string>>();

function setRuns(list: SrtRun[]): void {
  runs = new Map(list.map((r) => [r.token, new Set(r.grants)]));
  native?.setRuns(list);
}

function data(peer: IngestPeer): PeerData {
  const d: PeerData = { id: peer.id, stream: peer.stream, remote: peer.remote, params: { ...peer.params }, traffic: peer.traffic() };
  if (peer.token !== undefined) d.token = peer.token;
  return d;
}

const drops = new PipeDrops('SRT host -> service', (f, m) => log.warn(f, m));

/** The service's stream table, as the relay reaches it: claims over IPC, chunks over the media pipe. */
const table: RelayTable = {
  claim: (peer) => new Promise((resolve) => {
    const n = ++seq;
    claims.set(n, (refusal) => {
      if (!refusal) live.set(peer.id, peer);
      resolve(refusal);
    });
    send({ t: 'claim', seq: n, mode: peer.mode, sock: peer.sock, peer: data(peer) });
  }),
  media: (sock, chunk) => { drops.note(writeFrame(media, PUBLISHED, [sock], chunk), chunk.length); },
  release: (peer) => {
    live.delete(peer.id);
    send({ t: 'release', id: peer.id, traffic: peer.traffic() });
    giveBackSoon();
  },
};

type Gc = (o: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
let trim: (() => boolean) | undefined;
let giveBackTimer: NodeJS.Timeout | undefined;

/**
 * What connections that left held goes back to the system once departures stop for a while: a
 * memory-reducing collection of the heap (their buffers, V8's pooled pages; the service starts the
 * host with `--expose-gc`), then glibc's free pages (the addon's `trim`). Without it the host kept
 * about 30 MB of 50 subscribers' after they left (`bench/rss/whole.ts --srt-subscribers 50`).
 */
function giveBackSoon(): void {
  clearTimeout(giveBackTimer);
  giveBackTimer = setTimeout(() => {
    const before = process.memoryUsage.rss();
    const gc = (globalThis as { gc?: Gc }).gc;
    gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    // after V8's background threads freed the swept pages
    giveBackTimer = setTimeout(() => {
      const trimmed = trim?.() ?? false;
      const mb = (n: number) => Math.round(n / 1e5) / 10;
      log.debug({ rss_before_mb: mb(before), rss_after_mb: mb(process.memoryUsage.rss()), collected: gc !== undefined, trimmed },
        'the SRT host gave memory back after connections left');
    }, 200).unref();
  }, GIVE_BACK_MS).unref();
}
readFrames(media, (kind, socks, chunk) => { if (kind === DELIVER) relay?.deliver(socks, chunk); }, (why) => log.error({ why }, 'the SRT host media pipe broke'));

function start(o: HostOptions): void {
  let addon;
  try {
    addon = loadAddon(o.addonPath);
  } catch (err) {
    fail({ t: 'failed', stage: 'addon', message: (err as Error).message.split('\n')[0]! });
    return;
  }
  trim = typeof addon.trim === 'function' ? addon.trim : undefined;
  const events = new EventsLog({ enable: o.logEnable, topics: o.logTopics });
  relay = new SrtRelay({
    log, token: o.token, userKeys: o.userKeys, events, handshakeMs: o.handshakeMs, idleMs: o.idleMs, table, runs: (token) => runs.get(token),
  });
  native = new addon.SrtServer({
    host: o.host, port: o.port, latencyMs: LATENCY_MS, passphrase: o.passphrase, token: o.token, queue: EVENT_QUEUE,
    maxConnections: o.maxConnections, maxPerAddress: o.maxPerAddress, failBaseMs: o.failBaseMs, failMaxMs: o.failMaxMs, peerIdleMs: o.idleMs, userKeys: o.userKeys,
  }, relay.onEvent);
  relay.attach(native);
  try {
    send({ t: 'listening', port: native.start(), libsrt: versionString(addon.version) });
  } catch (err) {
    relay.close();
    fail({ t: 'failed', stage: 'bind', message: (err as Error).message });
    return;
  }
  setInterval(() => {
    if (live.size === 0) return;
    send({ t: 'traffic', rows: [...live.values()].map((p) => { const tr = p.traffic(); return [p.id, tr.rxBytes, tr.txBytes]; }) });
  }, TRAFFIC_MS).unref();
}

function stop(): void {
  relay?.close();
  native?.stop();
  process.exit(0);
}

process.on('message', (m: ToHost) => {
  if (m.t === 'start') start(m.opts);
  else if (m.t === 'claimed') { claims.get(m.seq)?.(m.refusal); claims.delete(m.seq); }
  else if (m.t === 'kick') relay?.kick(m.sock, m.why);
  else if (m.t === 'names') native?.setPublishers(m.names, m.readable);
  else if (m.t === 'runs') { setRuns(m.runs); send({ t: 'runsSet', seq: m.seq }); }
  else if (m.t === 'users') native?.setUsers(m.users);
  else if (m.t === 'list' && relay) send({ t: 'listed', seq: m.seq, value: relay.list() });
});
// the service went away (or closed the channel to stop it): end every connection and go
process.on('disconnect', stop);
process.on('SIGTERM', stop);
