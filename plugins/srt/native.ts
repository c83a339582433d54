import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/*
 * The native addon (addon/srt-addon.cc), loaded only when SRT is enabled so a configuration
 * without SRT never maps libsrt. Its shape is typed here; everything else is TypeScript.
 */

/** Events from the addon's worker thread, in order per socket. */
export type SrtEventType = 'accept' | 'data' | 'close' | 'reject';

/**
 * `(type, id, text, extra, code, why)`: accept → text = streamid, extra = peer; data → extra = bytes;
 * close → text = `closed`/`broken`; reject → text = streamid, extra = peer, code = reject reason
 * (SRT_REJX_* of the handshake, or libsrt's SRT_REJ_BADSECRET / SRT_REJ_UNSECURE for a key
 * mismatch found at accept), why = the reason in words.
 */
export type SrtEventFn = (type: SrtEventType, id: number, text: string, extra: string | Buffer, code: number, why: string) => void;

export interface SrtNativeOptions {
  host: string;
  port: number;
  latencyMs: number;
  passphrase: string;
  token: string;
  /** Bound of the event queue towards JS; media beyond it is dropped and counted. */
  queue: number;
  /** Connections in total (`srt.max_connections`); more are refused in the handshake. */
  maxConnections?: number;
  /** Connections per client address (`srt.max_connections_per_address`; 127.0.0.1 and ::1 exempt). */
  maxPerAddress?: number;
  /** First lockout after a wrong token or passphrase (0 = none); doubles per failure up to `failMaxMs`. */
  failBaseMs?: number;
  failMaxMs?: number;
  /** libsrt's peer idle timeout of accepted sockets (ms). */
  peerIdleMs?: number;
  /** A token `<user>:<token>` that is not `token` passes the handshake: the service asks IAM after accept. */
  userKeys?: boolean;
  /** Set only for a caller (tests, bench): connect with this streamid instead of listening. */
  streamid?: string;
  /** Caller only: the local IPv4 address to send from (e.g. 127.0.0.2 to be a stranger). */
  localHost?: string;
}

/** libsrt's own statistic names (`srt_bstats`), plus the addon's `queueDrops`. */
export type SrtRawStats = Record<string, number>;

export interface SrtNativeSocket {
  /** Listener: binds and returns the bound port. Caller: connects and returns the socket id. */
  start(): number;
  stop(): void;
  /** Queues bytes in 1316-byte messages without blocking; returns how many were queued. */
  send(id: number, data: Buffer): number;
  close(id: number): void;
  stats(id: number): SrtRawStats | null;
  /**
   * The names with a live publisher (a second publisher is refused, a request admitted) and the
   * names that are readable without one yet (on-demand: a request is admitted and waits).
   */
  setPublishers(names: string[], readable?: string[]): void;
  /** The children's run credentials the handshake admits (run-scope.ts): replaces the last list. */
  setRuns(runs: ReadonlyArray<{ token: string; passphrase: string; grants: string[] }>): void;
  /** The IAM users with a passphrase of their own, by name (a user's key is keyed with it): replaces the last map. */
  setUsers(users: Readonly<Record<string, string>>): void;
}

export interface SrtAddon {
  SrtServer: new (opts: SrtNativeOptions, onEvent: SrtEventFn) => SrtNativeSocket;
  /** libsrt's version, 0xMMmmpp. */
  version: number;
  /** glibc's `malloc_trim(0)`: free pages of the process's arenas back to the system; true when some were. */
  trim(): boolean;
}

/** Where the build puts the addon; `CORE_SRT_ADDON` points elsewhere (tests of a missing addon). */
export function addonPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.CORE_SRT_ADDON || fileURLToPath(new URL('./addon/build/Release/srt_addon.node', import.meta.url));
}

/** Loads the addon; throws with the reason (missing build, missing libsrt.so). */
export function loadAddon(path: string): SrtAddon {
  return createRequire(import.meta.url)(path) as SrtAddon;
}

/** `0x010501` → `1.5.1`. */
export function versionString(v: number): string {
  return `${v >> 16}.${(v >> 8) & 0xff}.${v & 0xff}`;
}
