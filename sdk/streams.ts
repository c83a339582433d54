import { createServiceRef } from './refs.ts';
import type { IngestPeer, IngestRefusalKind } from './ingest.ts';

/*
 * The stream table: every live stream of the service, whatever protocol publishes or reads it.
 * A stream has a name, ONE publisher and any number of readers; each side is an `IngestPeer`, so
 * each is tagged with its protocol. The publisher pushes packets in its format; a reader asking
 * for another format is served by a converter the table creates once per stream and format and
 * shares between all readers of that format (remux only: no ffmpeg, no re-encoding).
 *
 * Names are protocol neutral (MediaMTX's model): one name is one stream on every protocol.
 * - RTMP: the URL path without its leading `/` (`rtmp://h/live/abc.stream` -> `live/abc.stream`);
 * - SRT: the streamid's resource as given (`live/abc.stream`, or `abc`);
 * - HTTP-TS and other protocols: the name as given.
 * A leading `/` is always stripped (`streamName`), so `live/abc.stream` published over RTMP is
 * read over SRT with `streamid=live/abc.stream` and the reverse.
 *
 * Fan-out is allocation-light: a packet is one Buffer (or one `FlvPacket`) shared by every reader;
 * a reader must neither change nor keep it past its `send`. A reader that cannot keep up is
 * dropped (its `send` returns false, or throws), never stalling the publisher or other readers.
 */

/** What a stream carries: FLV tags (RTMP) or MPEG-TS (SRT, HTTP-TS). */
export type StreamFormat = 'flv' | 'mpegts';

/** The role of one FLV tag for a reader that starts late. */
export type FlvPacketKind = 'metadata' | 'audio-header' | 'video-header' | 'keyframe' | 'frame';

/** One FLV tag of a stream. */
export interface FlvPacket {
  /** `audio-header`, `video-header` and `metadata` replace the stream's stored ones. */
  readonly kind: FlvPacketKind;
  /** The FLV tag type: 8 audio, 9 video, 18 script data (metadata). */
  readonly type: 8 | 9 | 18;
  /** FLV codec id (7 h264, 10 aac, 2 mp3) or an Enhanced RTMP FourCC as a number. */
  readonly codec: number;
  /** Decoding timestamp in milliseconds. */
  readonly timestamp: number;
  /** The FLV tag body (shared; its bytes never change: the RTMP plugin may swap it for a view of the same bytes in its `wire`). */
  readonly body: Buffer;
  /**
   * A cache of this packet's RTMP chunk encoding: the RTMP plugin fills it once (when it
   * publishes, or for the first RTMP reader of a converted packet) and every RTMP reader shares it.
   */
  wire?: Buffer;
}

/** The packet type of each format; `mpegts` packets are Buffers of whole 188-byte TS packets. */
export interface StreamPackets {
  flv: FlvPacket;
  mpegts: Buffer;
}

/** The packet of format `F`: an `FlvPacket` or a Buffer of whole TS packets. */
export type StreamPacket<F extends StreamFormat> = StreamPackets[F];

/** Why a reader stops: its publisher ended, or it was dropped (too slow, or its `send` threw). */
export type StreamStopReason = 'ended' | 'dropped';

/** Where a reader's packets go (a connection of the reading protocol). */
export interface StreamSink<F extends StreamFormat> {
  /**
   * Writes a batch of packets (the stream's own, shared by every reader: not to be changed or kept
   * past the call). FLV batches hold one tick of the publisher's packets; a new reader's first
   * batch is its start (see `StreamTable.read`). False when the reader is too far behind: it is
   * dropped and `stop('dropped')` follows.
   */
  send(batch: readonly StreamPacket<F>[]): boolean;
  /** The reader is no longer served; the protocol ends its connection. Called once. */
  stop(reason: StreamStopReason): void;
}

/**
 * Stable codes of a refused publish or read: the table's rules, `STREAM_REFUSED` (a `prePublish` /
 * `prePlay` tap said no, threw, or did not answer within `checkTimeoutMs`; its kind is the tap's)
 * and `STREAM_GONE` (the client went away while it was admitted: `signal` aborted; nothing was
 * claimed and no hook told, there is nobody to answer).
 */
export type StreamRefusalCode =
  | 'STREAM_BUSY' | 'STREAM_NOT_FOUND' | 'STREAM_LIMIT' | 'STREAM_FORMAT_UNAVAILABLE' | 'STREAM_BAD_NAME'
  | 'STREAM_REFUSED' | 'STREAM_GONE';

/**
 * Why the table refused. `kind` is what the protocol answers: `refusalCode(r, 'http' | 'srt')`
 * (`sdk/ingest.ts`) gives the family's one code for it.
 */
export interface StreamRefusal {
  readonly ok: false;
  readonly code: StreamRefusalCode;
  readonly reason: string;
  readonly kind: IngestRefusalKind;
}

/** What the table accepted. */
export interface StreamAccepted<T> {
  readonly ok: true;
  readonly handle: T;
}

/** A publish or read: accepted with its handle, or refused (check `ok`). */
export type StreamResult<T> = StreamAccepted<T> | StreamRefusal;

/** The publisher's side of a stream. */
export interface StreamPublisher<F extends StreamFormat> {
  readonly name: string;
  /** Hands a packet to every reader (and to the converters, when a reader asks for another format). */
  push(packet: StreamPacket<F>): void;
  /**
   * The publisher is gone: the stream is unlisted, then every reader is stopped with `ended`;
   * `onPublishEnd` gets its traffic (once, and only when it was announced). Call it once the
   * connection is gone, also after a refusal of the protocol's own.
   */
  end(): void;
  /** Readers now, in every format. */
  readonly readers: number;
  /** Tells the current app's hooks of this publisher (`onPublish`); see `StreamAdmission.announce`. */
  announce(): void;
}

/** A reader's side of a stream. */
export interface StreamReader {
  readonly name: string;
  readonly format: StreamFormat;
  /**
   * The reader left (its connection closed): it gets nothing more and no `stop`; `onPlayEnd` gets
   * its traffic (once, when it was announced). Call it when the connection is gone, also after
   * the table's `stop` (the end hook waits for it, so it counts the last bytes).
   */
  leave(): void;
  /** Tells the current app's hooks of this reader (`onPlay`); see `StreamAdmission.announce`. */
  announce(): void;
}

/**
 * How a client's publish or read is admitted (`StreamTable.publish` / `read` without `internal`).
 * `announce` on a handle: a protocol that announces `later` calls it once the peer streams (WebRTC:
 * when its media connects), and every protocol calls it again after a config reload kept the
 * connection, in its `onReady` (the new app's hooks learn of it; its bytes count from then on).
 */
export interface StreamAdmission {
  /** Aborted when the client goes away while it is admitted: the answer is `STREAM_GONE`, nothing claimed. */
  signal?: AbortSignal;
  /** The `pre*` taps answer within this many ms, or the peer is refused (`STREAM_REFUSED`, `overloaded`). */
  checkTimeoutMs?: number;
  /** `accepted` (default): `onPublish` / `onPlay` when the table accepts; `later`: at the handle's `announce()`. */
  announce?: 'accepted' | 'later';
}

/**
 * A publisher or reader inside the service (the cluster relay, a recording, a WebRTC feed): it
 * runs no ingest hook (no client to check or count: the client it serves was admitted on its own
 * way) and no on-demand wait, and the table answers at once.
 */
export interface InternalAccess {
  readonly internal: true;
}

/** A client's publish: its admission and the stream's bounds. */
export interface PublishOptions extends StreamAdmission, PublishLimits {}

/** A client's read: its admission, and how long it waits for a publisher started on demand. */
export interface ReadOptions extends StreamAdmission {
  /** Wait for a publisher a demand source starts (`whenPublished`): up to this many ms (default 15 s; 0: no wait). */
  demandWaitMs?: number;
}

/** A viewer admitted by `StreamTable.admit`: its hooks, not a read. */
export interface StreamAudience {
  /** `onPlay` to the app that runs now (again after a reload kept the viewer: bytes count from then). */
  announce(): void;
  /** The viewer is gone: `onPlayEnd` once with its traffic (when it was announced). */
  leave(): void;
}

/** Bounds a publisher sets for its stream (protocol or plugin settings). */
export interface PublishLimits {
  /** At most this many streams whose publisher has this peer's protocol (a plugin's `max_streams`). */
  maxStreamsOfProtocol?: number;
  /** At most this many readers of the stream. */
  maxReaders?: number;
}

/** One reader as the listing shows it. */
export interface StreamReaderInfo {
  readonly peer: IngestPeer;
  readonly format: StreamFormat;
}

/** One stream as the listing shows it. */
export interface StreamInfo {
  readonly name: string;
  readonly format: StreamFormat;
  readonly publisher: IngestPeer;
  /** Unix milliseconds of the publish start. */
  readonly since: number;
  readonly readers: readonly StreamReaderInfo[];
  /** FLV codec ids of the headers seen (0 = none yet; flv streams only). */
  readonly videoCodec: number;
  readonly audioCodec: number;
  /**
   * The kinds of media seen so far: an FLV stream's codec headers, an MPEG-TS stream's PMT.
   * `known`: every kind it carries is known (MPEG-TS at its first PMT; FLV once both headers
   * came: a stream of one kind sends one header only, so a plugin that must know waits a moment
   * after `since`, as the ladders do).
   */
  readonly media: { readonly video: boolean; readonly audio: boolean; readonly known: boolean };
}

/**
 * The stream table (provided by the core). It admits: a client's publish or read runs the ingest
 * hooks (`sdk/ingest.ts`: `prePublish` / `prePlay`, then `onPublish` / `onPlay` once accepted and
 * the end hook once with its traffic), waits for a publisher started on demand, and answers every
 * refusal as a `StreamRefusal` whose kind `refusalCode` turns into the protocol family's code. A
 * protocol plugin is its wire and these two calls. An `internal` publisher or reader skips all of
 * that and is answered at once (`InternalAccess`).
 *
 * @example
 * const pub = await ctx.deps.streams.publish(streamName(path), 'mpegts', peer, { maxStreamsOfProtocol: 10 });
 * if (!pub.ok) throw new ApiError(refusalCode(pub, 'http'), pub.reason, [pub.reason], 'MY_REFUSED');
 * body.on('data', (chunk: Buffer) => pub.handle.push(chunk));
 * body.on('close', () => pub.handle.end());
 *
 * const r = await ctx.deps.streams.read('live/abc', 'mpegts', peer, {
 *   send: (batch) => { for (const b of batch) res.write(b); return res.writableLength < 4e6; },
 *   stop: () => res.end(),
 * });
 * if (r.ok) res.once('close', () => r.handle.leave());
 */
export interface StreamTable {
  /**
   * Makes `peer` the publisher of `name`. Refused when the name is bad or taken or a limit is
   * reached (checked before the hooks, and again after them), or when a `prePublish` tap says no.
   */
  publish<F extends StreamFormat>(name: string, format: F, peer: IngestPeer, opts: PublishLimits & InternalAccess): StreamResult<StreamPublisher<F>>;
  publish<F extends StreamFormat>(name: string, format: F, peer: IngestPeer, opts?: PublishOptions): Promise<StreamResult<StreamPublisher<F>>>;
  /**
   * Adds a reader of `name` in `format`, after the `prePlay` taps and, for a name nothing
   * publishes, the wait for a publisher a demand source starts. It starts where a decoder can: FLV
   * with the metadata, the codec headers and the packets since the last keyframe (one batch);
   * MPEG-TS with the cached PAT and PMT, then the stream from its next video random access point
   * (at once without video). Refused when nothing publishes the name, the stream's reader limit
   * is reached, or no converter serves `format`.
   */
  read<F extends StreamFormat>(name: string, format: F, peer: IngestPeer, sink: StreamSink<F>, opts: InternalAccess): StreamResult<StreamReader>;
  read<F extends StreamFormat>(name: string, format: F, peer: IngestPeer, sink: StreamSink<F>, opts?: ReadOptions): Promise<StreamResult<StreamReader>>;
  /**
   * Admits a viewer that a reader of the plugin's own serves (one internal read fanned out to many
   * viewers, as WebRTC's feed): the `prePlay` taps, then `onPlay` at the handle's `announce()` and
   * `onPlayEnd` once with the peer's traffic at `leave()`, exactly as for a reader. It reads
   * nothing and is not listed as a reader (the plugin's internal reader is).
   */
  admit(peer: IngestPeer, opts?: StreamAdmission): Promise<StreamResult<StreamAudience>>;
  /**
   * The decision on a peer's `key` alone (`decideKey`), as the admission makes it first: undefined
   * when it has none or it is allowed, else the refusal. For a protocol that answers a key before
   * it does any work (WebRTC, ahead of the SDP) or checks it again (a reload).
   */
  keyRefusal(peer: IngestPeer, role: 'publish' | 'play'): StreamRefusal | undefined;
  /** The live stream of a name. */
  get(name: string): StreamInfo | undefined;
  /** Every live stream, or those whose publisher speaks `protocol` (or one of a list, e.g. `['rtmp', 'rtmps']`). */
  list(protocol?: string | readonly string[]): StreamInfo[];
  /**
   * Calls `fn` with the live names whenever a stream starts or ends, or a demand source's waiting
   * names change (`demandChanged`); returns the unsubscribe.
   */
  onChange(fn: (names: readonly string[]) => void): () => void;
  /**
   * Adds a source of streams published on demand (the process engine's on-demand processes);
   * returns the removal. `whenPublished` asks the sources for a name nothing publishes.
   */
  addDemandSource(source: StreamDemandSource): () => void;
  /**
   * Before a read of a name nothing publishes: asks the demand sources, and when one starts a
   * publisher for `name`, waits for it up to `timeoutMs` (default 15 s). True when `name` is
   * published by then (read it now), false at once when no source publishes it (the read is
   * then refused `STREAM_NOT_FOUND` as before), when a source's budget refuses `from`, or when
   * the wait ran out. `from`: the reader's address (its `IngestPeer.remote`), which an on-demand
   * start is counted against; leave it out only for a reader inside the service (a relay).
   */
  whenPublished(name: string, timeoutMs?: number, from?: string): Promise<boolean>;
  /**
   * The names the demand sources would start a publisher for now (`waiting`, the default:
   * `StreamDemandSource.waiting`), or those whose publisher a demand started and that run or start
   * (`running`: `StreamDemandSource.running`; a read of one that is not live yet waits for it), for
   * a protocol that refuses a read of a name nothing publishes before it can wait (SRT's handshake).
   */
  demandNames(which?: 'waiting' | 'running'): string[];
  /** A demand source's waiting names changed: the `onChange` listeners are called. */
  demandChanged(): void;
}

/**
 * A source of streams published on demand. `demand` is called for each reader that asks for a
 * name nothing publishes: true when the source publishes that name and now starts (or keeps)
 * its publisher; false also when it refuses to start one for that reader (`from`: the reader's
 * address as `whenPublished` got it, undefined for a reader inside the service; `waitMs`: how long
 * that reader waits for the publish, so a publisher slow to start is not stopped as idle meanwhile). How long it
 * keeps publishing is the source's business: it sees the stream's readers in `StreamTable.get(name)`.
 *
 * @example
 * streams.addDemandSource({ demand: (name) => (name === 'cam1' ? (startCamera(), true) : false) });
 */
export interface StreamDemandSource {
  demand(name: string, from?: string, waitMs?: number): boolean;
  /**
   * The names whose publisher it would start on a demand now (not those starting or running);
   * it calls `StreamTable.demandChanged()` when they change.
   */
  waiting?(): Iterable<string>;
  /**
   * The names whose publisher it started on a demand and keeps now (starting or running); it calls
   * `StreamTable.demandChanged()` when they change.
   */
  running?(): Iterable<string>;
}

/**
 * Cuts a byte stream (HTTP chunks, a pipe's reads) into Buffers of whole 188-byte TS packets, the
 * stream table's `mpegts` packets: an aligned chunk goes on as it is (no copy), only a packet split
 * across two chunks is copied. Throws when a cut does not start with the sync byte (not MPEG-TS).
 *
 * @example
 * const cutter = new TsCutter();
 * body.on('data', (chunk: Buffer) => { const whole = cutter.cut(chunk); if (whole) pub.handle.push(whole); });
 */
export class TsCutter {
  #rest: Buffer | undefined;

  /** The whole packets now complete (undefined when none). */
  cut(chunk: Buffer): Buffer | undefined {
    const buf = this.#rest ? Buffer.concat([this.#rest, chunk]) : chunk;
    const whole = buf.length - (buf.length % 188);
    this.#rest = whole < buf.length ? Buffer.from(buf.subarray(whole)) : undefined;
    if (whole === 0) return undefined;
    if (buf[0] !== 0x47) throw new Error('not an MPEG-TS stream (no sync byte)');
    return buf.subarray(0, whole);
  }
}

/**
 * The table's name of a stream: the protocol's name with its leading `/` stripped.
 *
 * @example
 * streamName('/live/abc.stream') // 'live/abc.stream'
 */
export function streamName(protocolName: string): string {
  return protocolName.replace(/^\/+/, '');
}

/**
 * The stream table service (provided by the core).
 *
 * @example
 * deps: { streams: streamTableRef }
 */
export const streamTableRef = createServiceRef<StreamTable>('streams');
