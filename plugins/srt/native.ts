import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/*
 * The native addon (addon/srt-addon.cc), loaded only when SRT is enabled so a configuration
 * without SRT never maps libsrt. Its shape is typed here; everything else is TypeScript.
 */

/** Events from the addon's worker thread, in order per socket. */
export type SrtEventType = 'accept' | 'data' | 'close' | 'reject';

/**
 * `(type, id, text, extra, code)`: accept → text = streamid, extra = peer; data → extra = bytes;
 * close → text = `closed`/`broken`; reject → text = streamid, extra = peer, code = reject reason.
 */
export type SrtEventFn = (type: SrtEventType, id: number, text: string, extra: string | Buffer, code: number) => void;

export interface SrtNativeOptions {
  host: string;
  port: number;
  latencyMs: number;
  passphrase: string;
  token: string;
  /** Bound of the event queue towards JS; media beyond it is dropped and counted. */
  queue: number;
  /** Set only for a caller (tests, bench): connect with this streamid instead of listening. */
  streamid?: string;
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
  /** The names with a live publisher, for the handshake's conflict and not-found answers. */
  setPublishers(names: string[]): void;
}

export interface SrtAddon {
  SrtServer: new (opts: SrtNativeOptions, onEvent: SrtEventFn) => SrtNativeSocket;
  /** libsrt's version, 0xMMmmpp. */
  version: number;
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
