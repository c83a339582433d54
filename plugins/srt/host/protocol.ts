/*
 * The pipe between the service and its SRT host, a native program (addon/host.cc): libsrt, the
 * listener and its handshake checks, the sockets' sends and the publishers' media watch run
 * there, apart from the service, so that a fault inside libsrt (a crash on a malformed packet,
 * found by the fuzz suite in libsrt 1.5.1) ends that process and its SRT connections, never the
 * service. Everything else (the streamid, claims on the stream table, the ingest hooks, the
 * connection log, the listing) runs in the service (relay.ts).
 *
 * One pipe, fd 3 of the host, both ways, binary frames (media-pipe.ts): `kind` u8, `count` u16,
 * `length` u32, `count` u32 ids (socket ids, or a request's sequence number first), then `length`
 * bytes. The bytes of a control frame are fields, each a u32 length and its bytes (UTF-8; numbers
 * in decimal); of PUBLISHED and DELIVER, media; of STATS_OF and TRAFFIC, JSON. Integers big-endian.
 * The service closing its end is the order to end every connection and exit.
 */

/** Host -> service: one publisher's chunk (ids: the socket). */
export const PUBLISHED = 1;
/** Service -> host: one chunk of the stream table for the subscribers of `ids` (sent in 1316-byte messages). */
export const DELIVER = 2;

/** Service -> host, first: the settings (fields in `START_FIELDS` order). */
export const START = 10;
/** Service -> host: close the sockets of `ids` (no CLOSED comes back for them). */
export const CLOSE = 11;
/** Service -> host: the publisher of `ids[0]` was claimed: watch its media (first media, idle, liveness). */
export const WATCH = 12;
/** Service -> host: fields `n`, then n names with a live publisher, then the names readable without one. */
export const NAMES = 13;
/** Service -> host (ids: seq): the children's run credentials, fields per run: token, passphrase, grants joined by "\n". Answered RUNS_SET. */
export const RUNS = 14;
/** Service -> host: the IAM users' own passphrases, fields name, passphrase, name, passphrase... */
export const USERS = 15;
/** Service -> host (ids: seq, then the sockets): their statistics, answered STATS_OF. */
export const STATS = 16;

/** Host -> service: listening; fields port, libsrt's version (`1.5.1`). */
export const LISTENING = 20;
/** Host -> service: cannot listen (it exits next); fields stage (`addon` | `bind`), message. */
export const FAILED = 21;
/** Host -> service (ids: socket): a connection passed the handshake; fields streamid, peer address. */
export const ACCEPT = 22;
/**
 * Host -> service (ids: socket): a connection ended; fields why, by (`peer`: closed or broken
 * by the other side; `host`: closed by the host's media watch or as a too slow subscriber), sent
 * bytes, dropped bytes.
 */
export const CLOSED = 23;
/** Host -> service (ids: socket or -1): refused in the handshake; fields streamid, peer, code, why. */
export const REJECT = 24;
/** Host -> service (ids: seq): JSON `{ "<socket>": { <libsrt's srt_bstats names>: number } }`. */
export const STATS_OF = 25;
/** Host -> service, once a second while connections live: JSON `[[socket, sent, dropped], ...]`. */
export const TRAFFIC = 26;
/** Host -> service: a log line; fields level (debug | info | warn | error), message, JSON object of fields. */
export const LOG = 27;
/** Host -> service (ids: seq): the RUNS of that seq hold (a child told of them may connect). */
export const RUNS_SET = 28;

/** What the host needs to listen, in START's field order (sent over the pipe, never on argv). */
export const START_FIELDS = [
  'host', 'port', 'latencyMs', 'passphrase', 'token', 'maxConnections', 'maxPerAddress', 'failBaseMs', 'failMaxMs',
  'peerIdleMs', 'userKeys', 'handshakeMs', 'idleMs',
] as const;

/** The `srt` settings the host process takes at its start (HostOptions minus what stays in the service). */
export interface HostOptions {
  host: string;
  port: number;
  passphrase: string;
  token: string;
  logEnable: boolean;
  logTopics: string[];
  handshakeMs: number;
  idleMs: number;
  maxConnections: number;
  maxPerAddress: number;
  failBaseMs: number;
  failMaxMs: number;
  /** The iam plugin runs: a user's key `<user>:<token>` is admitted by the handshake and decided by the service. */
  userKeys: boolean;
}

/** libsrt's receive latency for accepted sockets (ms); callers may ask for more. */
export const LATENCY_MS = 120;

/** START's fields for these options. */
export function startFields(o: HostOptions): string[] {
  const v: Record<(typeof START_FIELDS)[number], string | number | boolean> = {
    host: o.host, port: o.port, latencyMs: LATENCY_MS, passphrase: o.passphrase, token: o.token, maxConnections: o.maxConnections,
    maxPerAddress: o.maxPerAddress, failBaseMs: o.failBaseMs, failMaxMs: o.failMaxMs, peerIdleMs: o.idleMs,
    userKeys: o.userKeys ? 1 : 0, handshakeMs: o.handshakeMs, idleMs: o.idleMs,
  };
  return START_FIELDS.map((k) => String(v[k]));
}

/** A control frame's bytes: each field as a u32 length and its UTF-8. */
export function encodeFields(fields: readonly string[]): Buffer {
  const parts = fields.map((f) => Buffer.from(f, 'utf8'));
  const out = Buffer.allocUnsafe(parts.reduce((n, p) => n + 4 + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.writeUInt32BE(p.length, at);
    p.copy(out, at + 4);
    at += 4 + p.length;
  }
  return out;
}

/** A control frame's fields; undefined when the bytes are not fields (the host is checked, not trusted). */
export function decodeFields(buf: Buffer): string[] | undefined {
  const out: string[] = [];
  let at = 0;
  while (at < buf.length) {
    if (buf.length - at < 4) return undefined;
    const len = buf.readUInt32BE(at);
    if (len > buf.length - at - 4) return undefined;
    out.push(buf.toString('utf8', at + 4, at + 4 + len));
    at += 4 + len;
  }
  return out;
}
