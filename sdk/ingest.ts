import { createHooksRef, AsyncSeriesBailHook, SyncBailHook, SyncHook } from './hooks.ts';

/*
 * Ingest: streams that clients publish into the service and play back from it, whatever the
 * protocol. The stream table runs these hooks (`StreamTable.publish` and `read`, `sdk/streams.ts`:
 * the table admits); the sessions plugin, access rules and a vendor's policy tap them without
 * knowing the protocol. A protocol plugin never calls them itself.
 *
 * Order for one connection: `prePublish` (or `prePlay`) may refuse it; if nobody does and the
 * table's own rules pass, `onPublish` (`onPlay`) fires once it is accepted (or when the protocol
 * announces it: WebRTC once its media connects), and `onPublishEnd` (`onPlayEnd`) exactly once
 * when it ends, however it ends. A refused connection gets no `on*`. Publishers and readers inside
 * the service (the cluster relay, recordings, WebRTC feeds) are `internal` and run no hook.
 */

/** One publishing or playing connection, as every ingest protocol describes it. */
export interface IngestPeer {
  /** Unique among the live connections of the service, e.g. `rtmp-17`, `srt-4`. */
  readonly id: string;
  /** `rtmp`, `rtmps`, `srt`, or a vendor's name. */
  readonly protocol: string;
  /**
   * The channel key as the protocol's listing shows it: `/live/abc.stream` for RTMP (the URL path
   * without query or token), `abc` for SRT (the streamid's resource). The stream table's name of
   * it is `streamName(stream)` (leading `/` stripped: `live/abc.stream`), the same on every protocol.
   */
  readonly stream: string;
  /** The client's address and port, `ip:port` (IPv6 as `[ip]:port`). */
  readonly remote: string;
  /** The token the client presented, if any. Never log it. */
  readonly token?: string;
  /**
   * A user's key (`<user>:<token>`) the protocol's own token did not match: the stream table's
   * admission has it decided (`decideKey`) before the `pre*` taps; a key no tap allows is refused
   * as a wrong token. Never log it.
   */
  readonly key?: string;
  /** Further parameters the client sent (RTMP query, SRT streamid keys), minus the token. */
  readonly params: Readonly<Record<string, string>>;
  /** Cumulative bytes so far: `rx` received from the client, `tx` sent to it. Cheap; poll it. */
  traffic(): IngestTraffic;
}

/** Cumulative bytes of one connection. */
export interface IngestTraffic {
  rxBytes: number;
  txBytes: number;
}

/** The kinds of refusal; each protocol family answers each with one code (`refusalCode`). */
export type IngestRefusalKind = 'unauthorized' | 'forbidden' | 'conflict' | 'not_found' | 'overloaded';

/** Why a `pre*` tap refused a connection; the protocol turns it into its own refusal and logs it. */
export interface IngestRefusal {
  /** Short reason for the log and, where the protocol can carry it, for the client. */
  reason: string;
  /** Kind of refusal, for protocols that distinguish them (SRT reject codes). Default `forbidden`. */
  kind?: IngestRefusalKind;
}

/**
 * The one code of each refusal kind per protocol family: `http` (WHIP/WHEP, HTTP-TS, a vendor's
 * HTTP ingest) answers the HTTP status; `srt` the access-control reject code (`SRT_REJX_*` of
 * libsrt's `access_control.h`). RTMP has no refusal code on its wire: the rtmp plugin answers an
 * `onStatus` error (its README), closes the connection and logs the kind.
 *
 * @example
 * REFUSAL_CODES.srt.conflict; // 1409: a second publisher of a busy streamid
 */
export const REFUSAL_CODES: Readonly<Record<'http' | 'srt', Readonly<Record<IngestRefusalKind, number>>>> = {
  http: { unauthorized: 401, forbidden: 403, not_found: 404, conflict: 409, overloaded: 503 },
  srt: { unauthorized: 1401, forbidden: 1403, not_found: 1404, conflict: 1409, overloaded: 1402 },
};

/**
 * The code a protocol family answers a refusal with (a tap's, or the stream table's): its kind
 * (default `forbidden`) looked up in `REFUSAL_CODES`.
 *
 * @example
 * const r = await ctx.deps.streams.publish(name, 'mpegts', peer);
 * if (!r.ok) throw new ApiError(refusalCode(r, 'http'), r.reason, [r.reason], 'MY_REFUSED');
 */
export function refusalCode(r: { readonly kind?: IngestRefusalKind }, family: 'http' | 'srt'): number {
  return REFUSAL_CODES[family][r.kind ?? 'forbidden'];
}

/**
 * The ingest hooks (owned by the SDK; run by the stream table for every protocol).
 *
 * @example
 * ctx.hooks.tap(ingestHooksRef, 'prePublish', async (peer) =>
 *   peer.stream.startsWith('/live/private') ? { reason: 'private streams are closed' } : undefined);
 * ctx.hooks.tap(ingestHooksRef, 'onPlayEnd', (peer, traffic) => ctx.log.info({ id: peer.id, ...traffic }, 'player left'));
 */
export const ingestHooksRef = createHooksRef('ingest', () => ({
  /**
   * A peer's `key` (before `prePublish` / `prePlay`): true admits it, a refusal refuses it; none
   * (no access plugin, or none knows the key) refuses it as a wrong token (`unauthorized`).
   */
  decideKey: new SyncBailHook<[IngestPeer, 'publish' | 'play'], true | IngestRefusal | undefined>(['peer', 'role']),
  /** Before a publisher is accepted; the first tap that returns a refusal wins. */
  prePublish: new AsyncSeriesBailHook<[IngestPeer], IngestRefusal | undefined | void>(['peer']),
  /** Before a player is accepted; the first tap that returns a refusal wins. */
  prePlay: new AsyncSeriesBailHook<[IngestPeer], IngestRefusal | undefined | void>(['peer']),
  /** A publisher is accepted and now owns its stream. */
  onPublish: new SyncHook<[IngestPeer]>(['peer']),
  /** The publisher is gone (closed, broken, kicked); its players are being closed. */
  onPublishEnd: new SyncHook<[IngestPeer, IngestTraffic]>(['peer', 'traffic']),
  /** A player is accepted and receives the stream. */
  onPlay: new SyncHook<[IngestPeer]>(['peer']),
  /** A player is gone. */
  onPlayEnd: new SyncHook<[IngestPeer, IngestTraffic]>(['peer', 'traffic']),
}));

/**
 * Calls a `pre*` hook, turning a throwing tap into a refusal rather than a crash (the stream
 * table's way; a protocol publishes and reads through the table instead).
 *
 * @example
 * const refusal = await askIngest(ctx.hooks.get(ingestHooksRef).prePublish, peer);
 * if (refusal) return refuse(connection, refusal.reason);
 */
export async function askIngest(
  hook: AsyncSeriesBailHook<[IngestPeer], IngestRefusal | undefined | void>,
  peer: IngestPeer,
): Promise<IngestRefusal | undefined> {
  try {
    return (await hook.promise(peer)) ?? undefined;
  } catch (err) {
    return { reason: `ingest check failed: ${(err as Error).message}`, kind: 'forbidden' };
  }
}

/**
 * Calls an `on*` hook; a throwing tap is reported through `onError`, never to the protocol.
 *
 * @example
 * tellIngest(hooks.onPlayEnd, (err) => ctx.log.warn({ err }, 'ingest tap failed'), peer, peer.traffic());
 */
export function tellIngest<A extends unknown[]>(hook: SyncHook<A>, onError: (err: Error) => void, ...args: A): void {
  try {
    hook.call(...(args as never as Parameters<SyncHook<A>['call']>));
  } catch (err) {
    onError(err as Error);
  }
}
