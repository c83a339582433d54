import type {
  InternalAccess, IngestPeer, PublishLimits, PublishOptions, ReadOptions, StreamDemandSource, StreamFormat, StreamInfo, StreamPacket, StreamPublisher,
  StreamAdmission, StreamAudience, StreamReader, StreamResult, StreamSink, StreamTable,
} from '../../sdk/index.ts';
import { Admission, keyRefusal, type AdmissionLog, type IngestHooks } from './admission.ts';
import { LiveStream } from './stream.ts';
import { FlvView } from './flv-view.ts';
import { conversionKey, type ConverterRegistry, type StreamConverter } from './converters.ts';
import { streamRefusals } from './errors.ts';
import { streamNameProblem, type StreamRefusal } from '../../sdk/index.ts';
import type { ViewReader } from './reader.ts';

/** What the table reports: a converter failed, a change listener or an ingest tap threw. */
export interface StreamTableLog extends AdmissionLog {
  warn(fields: object, msg: string): void;
}

export interface StreamTableOptions {
  /** The format converters (remux); a missing one refuses readers of that format. */
  converters?: ConverterRegistry;
  log?: StreamTableLog;
  /** The app's ingest hooks, which admit clients (none: clients are admitted without taps). */
  hooks?: IngestHooks;
}

/** A client's or an internal caller's options. */
type AnyPublish = PublishOptions | (PublishLimits & InternalAccess);
type AnyRead = ReadOptions | InternalAccess;
const isInternal = (o: AnyPublish | AnyRead | undefined): o is InternalAccess => (o as Partial<InternalAccess> | undefined)?.internal === true;

/** How long a reader waits for a publisher started on demand (`whenPublished`), ms. */
export const DEMAND_WAIT_MS = 15_000;

/**
 * A name the table keeps: not empty, no leading `/`, and the one stream-name rule (`sdk/stream-name.ts`):
 * all of it for a client's publish, what every kept name needs for the service's own.
 */
function nameProblem(name: string, client: boolean): string | undefined {
  if (name === '') return 'empty';
  if (name.startsWith('/')) return "a leading '/' (use streamName)";
  return streamNameProblem(name, client ? undefined : { kept: true });
}

/**
 * The stream table of one app (core/app.ts provides it as `streamTableRef`): live streams by
 * name, one publisher each, readers in any format a converter serves. No protocol and no HTTP
 * here: the protocol plugins publish and read through it, and it admits them (the ingest hooks,
 * the on-demand wait: `admission.ts`); an `internal` caller is answered at once, without hooks.
 */
export class Streams implements StreamTable {
  readonly #streams = new Map<string, LiveStream>();
  #converters: ConverterRegistry = {};
  #log: StreamTableLog | undefined;
  #hooks: IngestHooks | undefined;
  readonly #listeners = new Set<(names: readonly string[]) => void>();
  readonly #demand = new Set<StreamDemandSource>();

  constructor(opts: StreamTableOptions = {}) {
    this.rebind(opts);
  }

  /**
   * The next app's converters, log and ingest hooks (the service keeps the table across reloads);
   * streams and readers already live keep the converters they were made with, and their end hooks
   * go to the app that runs when they end.
   */
  rebind(opts: StreamTableOptions): void {
    this.#converters = opts.converters ?? {};
    this.#log = opts.log;
    this.#hooks = opts.hooks;
  }

  #admission(role: 'publish' | 'play', peer: IngestPeer): Admission {
    return new Admission(role, peer, () => this.#hooks, () => this.#log);
  }

  publish<F extends StreamFormat>(name: string, format: F, peer: IngestPeer, opts: PublishLimits & InternalAccess): StreamResult<StreamPublisher<F>>;
  publish<F extends StreamFormat>(name: string, format: F, peer: IngestPeer, opts?: PublishOptions): Promise<StreamResult<StreamPublisher<F>>>;
  publish<F extends StreamFormat>(name: string, format: F, peer: IngestPeer, opts?: AnyPublish): StreamResult<StreamPublisher<F>> | Promise<StreamResult<StreamPublisher<F>>> {
    if (isInternal(opts)) return this.#publish(name, format, peer, opts, undefined);
    return this.#admitPublish(name, format, peer, opts ?? {});
  }

  /** A client's publish: the table's rules, `prePublish`, the rules again, then `onPublish` (unless announced later). */
  async #admitPublish<F extends StreamFormat>(name: string, format: F, peer: IngestPeer, opts: PublishOptions): Promise<StreamResult<StreamPublisher<F>>> {
    // a key first: a client its key refuses learns nothing of the name (busy, bad)
    const admission = this.#admission('publish', peer);
    const keyed = admission.key();
    if (keyed) return keyed;
    const early = this.#publishProblem(name, peer, opts, true);
    if (early) return early;
    const refusal = await admission.check(opts.checkTimeoutMs);
    if (refusal) return refusal;
    if (opts.signal?.aborted) return streamRefusals.gone();
    const r = this.#publish(name, format, peer, opts, admission);
    if (r.ok && opts.announce !== 'later') admission.announce();
    return r;
  }

  #publishProblem(name: string, peer: IngestPeer, limits: PublishLimits, client: boolean): StreamRefusal | undefined {
    const bad = nameProblem(name, client);
    if (bad) return streamRefusals.badName(bad);
    if (this.#streams.has(name)) return streamRefusals.busy(name);
    const max = limits.maxStreamsOfProtocol;
    if (max !== undefined && this.list(peer.protocol).length >= max) return streamRefusals.tooManyStreams(peer.protocol, max);
    return undefined;
  }

  #publish<F extends StreamFormat>(name: string, format: F, peer: IngestPeer, opts: PublishLimits, admission: Admission | undefined): StreamResult<StreamPublisher<F>> {
    const problem = this.#publishProblem(name, peer, opts, admission !== undefined);
    if (problem) return problem;
    const limits: PublishLimits = {};
    if (opts.maxReaders !== undefined) limits.maxReaders = opts.maxReaders;
    if (opts.maxStreamsOfProtocol !== undefined) limits.maxStreamsOfProtocol = opts.maxStreamsOfProtocol;
    const s = new LiveStream(name, format, peer, limits);
    s.onConverterError = (to, err) => this.#log?.warn({ stream: name, from: format, to, err: String(err) }, 'stream conversion failed; its readers were dropped');
    this.#streams.set(name, s);
    this.#changed();
    const handle: StreamPublisher<F> = {
      name,
      push: (packet: StreamPacket<F>) => s.push(packet),
      end: () => { this.#end(s); admission?.end(); },
      get readers() { return s.readerCount; },
      announce: () => admission?.announce(),
    };
    return { ok: true, handle };
  }

  #end(s: LiveStream): void {
    if (s.ended) return;
    // unlisted first: a reader stopped now that asks again finds nothing
    if (this.#streams.get(s.name) === s) this.#streams.delete(s.name);
    s.end('ended');
    this.#changed();
  }

  read<F extends StreamFormat>(name: string, format: F, peer: IngestPeer, sink: StreamSink<F>, opts: InternalAccess): StreamResult<StreamReader>;
  read<F extends StreamFormat>(name: string, format: F, peer: IngestPeer, sink: StreamSink<F>, opts?: ReadOptions): Promise<StreamResult<StreamReader>>;
  read<F extends StreamFormat>(name: string, format: F, peer: IngestPeer, sink: StreamSink<F>, opts?: AnyRead): StreamResult<StreamReader> | Promise<StreamResult<StreamReader>> {
    if (isInternal(opts)) return this.#read(name, format, peer, sink, undefined);
    return this.#admitRead(name, format, peer, sink, opts ?? {});
  }

  /** A client's read: `prePlay`, the wait for an on-demand publisher, the table's rules, then `onPlay` (unless announced later). */
  async #admitRead<F extends StreamFormat>(name: string, format: F, peer: IngestPeer, sink: StreamSink<F>, opts: ReadOptions): Promise<StreamResult<StreamReader>> {
    const admission = this.#admission('play', peer);
    const refusal = await admission.check(opts.checkTimeoutMs);
    if (refusal) return refusal;
    if (opts.signal?.aborted) return streamRefusals.gone();
    // a stream published on demand (an on-demand process) is started for this reader, who waits for it
    if (!this.#streams.has(name) && opts.demandWaitMs !== 0) {
      await this.whenPublished(name, opts.demandWaitMs, peer.remote);
      if (opts.signal?.aborted) return streamRefusals.gone();
    }
    const r = this.#read(name, format, peer, sink, admission);
    if (r.ok && opts.announce !== 'later') admission.announce();
    return r;
  }

  keyRefusal(peer: IngestPeer, role: 'publish' | 'play'): StreamRefusal | undefined {
    return keyRefusal(this.#hooks, peer, role);
  }

  async admit(peer: IngestPeer, opts: StreamAdmission = {}): Promise<StreamResult<StreamAudience>> {
    const admission = this.#admission('play', peer);
    const refusal = await admission.check(opts.checkTimeoutMs);
    if (refusal) return refusal;
    if (opts.signal?.aborted) return streamRefusals.gone();
    if (opts.announce !== 'later') admission.announce();
    return { ok: true, handle: { announce: () => admission.announce(), leave: () => admission.end() } };
  }

  #read<F extends StreamFormat>(name: string, format: F, peer: IngestPeer, sink: StreamSink<F>, admission: Admission | undefined): StreamResult<StreamReader> {
    const s = this.#streams.get(name);
    if (!s) return streamRefusals.notFound(name);
    const max = s.limits.maxReaders;
    if (max !== undefined && s.readerCount >= max) return streamRefusals.tooManyReaders(name, max);
    let view;
    try {
      view = s.view(format, () => this.#converter(s.format, format));
    } catch (err) {
      const why = err instanceof Unavailable ? 'format not available' : `conversion failed (${String(err)})`;
      return streamRefusals.format(name, s.format, format, why);
    }
    if (view === 'failed') return streamRefusals.format(name, s.format, format, 'conversion failed');
    const reader: ViewReader<StreamFormat> = { peer, sink: sink as StreamSink<StreamFormat>, started: false };
    view.join(reader);
    const leave = () => { view.leave(reader); admission?.end(); };
    return { ok: true, handle: { name, format, leave, announce: () => admission?.announce() } };
  }

  #converter(from: StreamFormat, to: StreamFormat): StreamConverter<StreamFormat, StreamFormat> {
    const make = this.#converters[conversionKey(from, to)];
    if (!make) throw new Unavailable();
    return make() as StreamConverter<StreamFormat, StreamFormat>;
  }

  get(name: string): StreamInfo | undefined {
    const s = this.#streams.get(name);
    return s ? info(s) : undefined;
  }

  list(protocol?: string | readonly string[]): StreamInfo[] {
    const want = typeof protocol === 'string' ? [protocol] : protocol;
    const out: StreamInfo[] = [];
    for (const s of this.#streams.values()) if (!want || want.includes(s.publisher.protocol)) out.push(info(s));
    return out;
  }

  onChange(fn: (names: readonly string[]) => void): () => void {
    this.#listeners.add(fn);
    return () => { this.#listeners.delete(fn); };
  }

  addDemandSource(source: StreamDemandSource): () => void {
    this.#demand.add(source);
    return () => { this.#demand.delete(source); };
  }

  whenPublished(name: string, timeoutMs = DEMAND_WAIT_MS, from?: string): Promise<boolean> {
    if (this.#streams.has(name)) return Promise.resolve(true);
    let wanted = false;
    for (const src of this.#demand) {
      try {
        if (src.demand(name, from, timeoutMs)) wanted = true;
      } catch (err) {
        this.#log?.warn({ err: String(err), stream: name }, 'a stream demand source failed');
      }
    }
    if (!wanted) return Promise.resolve(false);
    return new Promise((done) => {
      const finish = (ok: boolean): void => {
        clearTimeout(timer);
        off();
        done(ok);
      };
      const off = this.onChange(() => { if (this.#streams.has(name)) finish(true); });
      const timer = setTimeout(() => finish(this.#streams.has(name)), timeoutMs);
    });
  }

  demandNames(which: 'waiting' | 'running' = 'waiting'): string[] {
    const out = new Set<string>();
    for (const src of this.#demand) {
      try {
        for (const n of (which === 'running' ? src.running?.() : src.waiting?.()) ?? []) out.add(n);
      } catch (err) {
        this.#log?.warn({ err: String(err) }, 'a stream demand source failed');
      }
    }
    return [...out];
  }

  demandChanged(): void {
    this.#changed();
  }

  #changed(): void {
    if (this.#listeners.size === 0) return;
    const names = [...this.#streams.keys()];
    for (const fn of this.#listeners) {
      try {
        fn(names);
      } catch (err) {
        this.#log?.warn({ err: String(err) }, 'a stream table listener failed');
      }
    }
  }

  /** Ends every stream (the app closes). */
  close(): void {
    for (const s of [...this.#streams.values()]) this.#end(s);
  }
}

/** No converter for the asked format. */
class Unavailable extends Error {}

function info(s: LiveStream): StreamInfo {
  const readers: Array<StreamInfo['readers'][number]> = [];
  for (const { format, view } of s.views()) for (const r of view.readers()) readers.push({ peer: r.peer, format });
  const flv = s.source instanceof FlvView ? s.source : undefined;
  return {
    name: s.name, format: s.format, publisher: s.publisher, since: s.since, readers,
    videoCodec: flv?.videoCodec ?? 0, audioCodec: flv?.audioCodec ?? 0, media: { ...s.source.media },
  };
}
