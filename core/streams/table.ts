import type {
  IngestPeer, PublishLimits, StreamDemandSource, StreamFormat, StreamInfo, StreamPacket, StreamPublisher, StreamReader, StreamResult, StreamSink,
  StreamTable,
} from '../../sdk/index.ts';
import { LiveStream } from './stream.ts';
import { FlvView } from './flv-view.ts';
import { conversionKey, type ConverterRegistry, type StreamConverter } from './converters.ts';
import { streamRefusals } from './errors.ts';
import type { ViewReader } from './reader.ts';

/** What the table reports: a converter failed, a change listener threw. */
export interface StreamTableLog {
  warn(fields: object, msg: string): void;
}

export interface StreamTableOptions {
  /** The format converters (remux); a missing one refuses readers of that format. */
  converters?: ConverterRegistry;
  log?: StreamTableLog;
}

/** How long a reader waits for a publisher started on demand (`whenPublished`), ms. */
export const DEMAND_WAIT_MS = 15_000;

/** A name the table keeps: no control characters, not empty, at most 1024 characters. */
function nameProblem(name: string): string | undefined {
  if (name === '') return 'empty';
  if (name.length > 1024) return 'longer than 1024 characters';
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'control characters';
  if (name.startsWith('/')) return "a leading '/' (use streamName)";
  return undefined;
}

/**
 * The stream table of one app (core/app.ts provides it as `streamTableRef`): live streams by
 * name, one publisher each, readers in any format a converter serves. No protocol and no HTTP
 * here: the protocol plugins publish and read through it.
 */
export class Streams implements StreamTable {
  readonly #streams = new Map<string, LiveStream>();
  #converters: ConverterRegistry;
  #log: StreamTableLog | undefined;
  readonly #listeners = new Set<(names: readonly string[]) => void>();
  readonly #demand = new Set<StreamDemandSource>();

  constructor(opts: StreamTableOptions = {}) {
    this.#converters = opts.converters ?? {};
    this.#log = opts.log;
  }

  /**
   * The next app's converters and log (the service keeps the table across reloads); streams and
   * readers already live keep the converters they were made with.
   */
  rebind(opts: StreamTableOptions): void {
    this.#converters = opts.converters ?? {};
    this.#log = opts.log;
  }

  publish<F extends StreamFormat>(name: string, format: F, peer: IngestPeer, limits: PublishLimits = {}): StreamResult<StreamPublisher<F>> {
    const bad = nameProblem(name);
    if (bad) return streamRefusals.badName(bad);
    if (this.#streams.has(name)) return streamRefusals.busy(name);
    const max = limits.maxStreamsOfProtocol;
    if (max !== undefined && this.list(peer.protocol).length >= max) return streamRefusals.tooManyStreams(peer.protocol, max);
    const s = new LiveStream(name, format, peer, limits);
    s.onConverterError = (to, err) => this.#log?.warn({ stream: name, from: format, to, err: String(err) }, 'stream conversion failed; its readers were dropped');
    this.#streams.set(name, s);
    this.#changed();
    const handle: StreamPublisher<F> = {
      name,
      push: (packet: StreamPacket<F>) => s.push(packet),
      end: () => this.#end(s),
      get readers() { return s.readerCount; },
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

  read<F extends StreamFormat>(name: string, format: F, peer: IngestPeer, sink: StreamSink<F>): StreamResult<StreamReader> {
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
    return { ok: true, handle: { name, format, leave: () => { view.leave(reader); } } };
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
        if (src.demand(name, from)) wanted = true;
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
    videoCodec: flv?.videoCodec ?? 0, audioCodec: flv?.audioCodec ?? 0,
  };
}
