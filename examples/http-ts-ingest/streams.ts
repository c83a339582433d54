import type { IngestPeer } from '@media-core/sdk';
import { httptsErrors } from './errors.ts';

/** Where a live stream's bytes go: an HTTP response of a reading process, in the routes. */
export interface StreamReader {
  readonly peer: IngestPeer;
  /** Queues a chunk; false when the reader is too far behind and must be dropped. */
  write(chunk: Buffer): boolean;
  /** The stream ended (or the reader was dropped): finish the response. */
  end(): void;
  /** Ends the reader's connection at once (its write failed). */
  abort?(): void;
}

/** One published stream. */
export interface LiveStream {
  readonly name: string;
  readonly publisher: IngestPeer;
  readonly since: number;
  rxBytes: number;
  readonly readers: Set<StreamReader>;
}

/**
 * The live streams of this plugin, by name: one publisher each, any number of readers that get
 * every chunk from the moment they join (MPEG-TS resynchronises on its packet boundaries). No
 * HTTP in here; the routes feed it and the hooks are told by the caller.
 */
export class StreamHub {
  readonly #streams = new Map<string, LiveStream>();
  readonly #max: number;

  constructor(opts: { maxStreams: number }) {
    this.#max = opts.maxStreams;
  }

  /** Starts a stream; refuses a second publisher of a name and more than `maxStreams`. */
  open(name: string, publisher: IngestPeer): LiveStream {
    if (this.#streams.has(name)) throw httptsErrors.busy(name);
    if (this.#streams.size >= this.#max) throw httptsErrors.full(this.#max);
    const s: LiveStream = { name, publisher, since: Date.now(), rxBytes: 0, readers: new Set() };
    this.#streams.set(name, s);
    return s;
  }

  /**
   * Hands a chunk of the publisher's body to every reader; a reader too far behind is dropped, and
   * so is one whose write throws (`onReaderError` is told): one reader never ends the stream.
   */
  push(s: LiveStream, chunk: Buffer, onReaderError?: (r: StreamReader, err: unknown) => void): StreamReader[] {
    s.rxBytes += chunk.length;
    const dropped: StreamReader[] = [];
    for (const r of s.readers) {
      let ok = false;
      try {
        ok = r.write(chunk);
      } catch (err) {
        onReaderError?.(r, err);
      }
      if (!ok) dropped.push(r);
    }
    for (const r of dropped) this.detach(s, r);
    return dropped;
  }

  /** Ends a stream and every reader of it; returns the readers that were attached. */
  close(s: LiveStream): StreamReader[] {
    if (this.#streams.get(s.name) === s) this.#streams.delete(s.name);
    const readers = [...s.readers];
    s.readers.clear();
    for (const r of readers) {
      try {
        r.end();
      } catch {
        // as in detach: the others still end
      }
    }
    return readers;
  }

  attach(name: string, reader: StreamReader): LiveStream {
    const s = this.#streams.get(name);
    if (!s) throw httptsErrors.notLive(name);
    s.readers.add(reader);
    return s;
  }

  detach(s: LiveStream, reader: StreamReader): boolean {
    if (!s.readers.delete(reader)) return false;
    try {
      reader.end();
    } catch {
      // a reader that fails to end is gone all the same
    }
    return true;
  }

  get(name: string): LiveStream | undefined {
    return this.#streams.get(name);
  }

  list(): LiveStream[] {
    return [...this.#streams.values()];
  }

  /** Ends everything (shutdown). */
  closeAll(): void {
    for (const s of this.list()) this.close(s);
  }
}

/** A live stream as the REST list and the GraphQL field show it. */
export interface StreamView {
  name: string;
  remote: string;
  /** Unix seconds. */
  since: number;
  bytes_rx: number;
  readers: number;
}

export function streamViews(hub: StreamHub): StreamView[] {
  return hub.list().map((s) => ({ name: s.name, remote: s.publisher.remote, since: Math.floor(s.since / 1000), bytes_rx: s.rxBytes, readers: s.readers.size }));
}
