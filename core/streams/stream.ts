import type { IngestPeer, PublishLimits, StreamFormat, StreamPacket, StreamStopReason } from '../../sdk/index.ts';
import { FlvView } from './flv-view.ts';
import { TsView } from './ts-view.ts';
import type { FormatView } from './reader.ts';
import type { StreamConverter } from './converters.ts';

type AnyView = FlvView | TsView;

function newView(format: StreamFormat): AnyView {
  return format === 'flv' ? new FlvView() : new TsView();
}

/** A conversion of the publisher's packets into another format's view. */
interface Conversion {
  converter: StreamConverter<StreamFormat, StreamFormat>;
  view: AnyView;
}

/**
 * One live stream: its publisher, the view of the publisher's format, and a converted view per
 * other format that a reader asked for. A converter that throws ends its conversion: its readers
 * are dropped and the format is refused for the rest of the stream's life.
 */
export class LiveStream {
  readonly name: string;
  readonly format: StreamFormat;
  readonly publisher: IngestPeer;
  readonly limits: PublishLimits;
  readonly since = Date.now();
  readonly source: AnyView;
  #conversions = new Map<StreamFormat, Conversion>();
  #failed = new Set<StreamFormat>();
  #ended = false;
  /** Told when a converter throws (for the table's log). */
  onConverterError: (to: StreamFormat, err: unknown) => void = () => {};

  constructor(name: string, format: StreamFormat, publisher: IngestPeer, limits: PublishLimits) {
    this.name = name;
    this.format = format;
    this.publisher = publisher;
    this.limits = limits;
    this.source = newView(format);
  }

  get ended(): boolean {
    return this.#ended;
  }

  get readerCount(): number {
    let n = this.source.size;
    for (const c of this.#conversions.values()) n += c.view.size;
    return n;
  }

  /** Every view with readers: the source first. */
  *views(): IterableIterator<{ format: StreamFormat; view: FormatView<StreamFormat> }> {
    yield { format: this.format, view: this.source as FormatView<StreamFormat> };
    for (const [format, c] of this.#conversions) yield { format, view: c.view as FormatView<StreamFormat> };
  }

  /** The view for `format`; `make` creates the converter when there is none yet. */
  view(format: StreamFormat, make: () => StreamConverter<StreamFormat, StreamFormat>): FormatView<StreamFormat> | 'failed' {
    if (format === this.format) return this.source as FormatView<StreamFormat>;
    if (this.#failed.has(format)) return 'failed';
    let c = this.#conversions.get(format);
    if (!c) {
      c = { converter: make(), view: newView(format) };
      this.#conversions.set(format, c);
      // a converter made mid-stream first gets what the source keeps for late readers (codec
      // headers and GOP, or PAT/PMT): without them it could not convert what follows
      for (const p of (this.source as FormatView<StreamFormat>).primer()) this.#convert(format, c, p);
      if (this.#failed.has(format)) return 'failed';
    }
    return c.view as FormatView<StreamFormat>;
  }

  push(packet: StreamPacket<StreamFormat>): void {
    if (this.#ended) return;
    (this.source as FormatView<StreamFormat>).push(packet);
    for (const [format, c] of this.#conversions) this.#convert(format, c, packet);
  }

  #convert(format: StreamFormat, c: Conversion, packet: StreamPacket<StreamFormat>): void {
    let out: readonly StreamPacket<StreamFormat>[];
    try {
      out = c.converter.push(packet);
    } catch (err) {
      this.#conversions.delete(format);
      this.#failed.add(format);
      c.view.close('dropped');
      this.onConverterError(format, err);
      return;
    }
    const view = c.view as FormatView<StreamFormat>;
    for (const p of out) view.push(p);
  }

  /** The publisher is gone: every reader of every view is stopped. */
  end(reason: StreamStopReason = 'ended'): void {
    if (this.#ended) return;
    this.#ended = true;
    this.source.close(reason);
    for (const c of this.#conversions.values()) c.view.close(reason);
    this.#conversions.clear();
  }
}
