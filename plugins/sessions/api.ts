import { createServiceRef, type Static, Type } from '../../sdk/index.ts';

/*
 * The sessions plugin's contract for other plugins (and vendors): the session registry. A protocol
 * plugin reports to its named collector; keeping, timing out, limiting and persisting is the registry's.
 */

/** What a session is about (reference 5.14). */
export interface SessionInfo {
  /** What is watched, e.g. the playlist name without extension or the stream path. */
  reference: string;
  /** "location", e.g. the playlist's request path or `publish:/live/x`. Default `unknown`. */
  location?: string;
  /** "peer", e.g. the Referer host or the remote `ip:port`. Default `unknown`. */
  peer?: string;
  /** Free text, e.g. `[<anonymised ip>] <user agent>`. */
  extra?: string;
}

/** One active session as the API lists it (reference 5.14 `Session`): its schema and its type. */
export const SessionSchema = Type.Object({
  id: Type.String(), reference: Type.String(), created_at: Type.Integer(), local: Type.String(), remote: Type.String(),
  extra: Type.String(), bytes_rx: Type.Integer(), bytes_tx: Type.Integer(),
  bandwidth_rx_kbit: Type.Number(), bandwidth_tx_kbit: Type.Number(),
});
export type SessionView = Static<typeof SessionSchema>;

/** Limits and timing of a collector; unset values come from the `sessions` config section. */
export interface CollectorOptions {
  /** Seconds without traffic after which an active session closes. */
  idleTimeoutSec?: number;
  /** Seconds a registered, never activated session waits before it is dropped (default 5). */
  pendingTimeoutSec?: number;
  /** Apply `sessions.max_sessions`, `max_bitrate_mbit` and `ip_ignorelist` (default true). */
  limits?: boolean;
}

/**
 * One named collector. Every method is cheap and synchronous (HLS calls them from the memfs fast
 * path). Unknown ids are ignored, so a late report after a close does no harm.
 *
 * @example
 * const rtmp = ctx.deps.sessions?.collector('rtmp');
 * rtmp?.register(peer.id, { reference: 'x', location: 'play:/live/x', peer: peer.remote }, true);
 * rtmp?.egress(peer.id, 1316);
 * rtmp?.close(peer.id);
 */
export interface SessionCollector {
  readonly name: string;
  /** A new session, pending until its first traffic or `activate`; `active` registers it active. */
  register(id: string, info: SessionInfo, active?: boolean): void;
  activate(id: string): void;
  /** Bytes received from the client (resets the idle timer, activates a pending session). */
  ingress(id: string, bytes: number): void;
  /** Bytes sent to the client. */
  egress(id: string, bytes: number): void;
  /** Ends a session now; an active one goes to the history. */
  close(id: string): void;
  /** True while the session is registered (pending or active). */
  has(id: string): boolean;
  /** False for addresses whose traffic is not counted (`sessions.ip_ignorelist`, unparsable). */
  collectable(ip: string): boolean;
  /**
   * Why a new session would be refused now (`Number of sessions exceeded`, `Bitrate limit
   * exceeded`), or undefined. `extraRxBitrate` is the ingress bit/s the new viewer adds (HLS: the
   * playlist's upload rate).
   */
  admission(extraRxBitrate?: number): string | undefined;
  /** Active sessions, oldest first. */
  active(): SessionView[];
}

/** The registry (provided by the `sessions` plugin; optional for everyone else). */
export interface SessionsService {
  /** The collector of that name, created on first use. */
  collector(name: string, opts?: CollectorOptions): SessionCollector;
  /** Names of the collectors that exist. */
  names(): string[];
  /**
   * Active sessions and historic session count of a collector whose reference starts with
   * `prefix` (`''` = all), for the widget.
   */
  count(collector: string, prefix: string): { current: number; total: number };
}

/**
 * The session registry (provided by the sessions plugin; absent without it).
 *
 * @example
 * deps: { sessions: optional(sessionsRef) },
 * setup(ctx) { const hls = ctx.deps.sessions?.collector('vendor-hls'); }
 */
export const sessionsRef = createServiceRef<SessionsService>('sessions');
