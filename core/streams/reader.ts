import type { IngestPeer, StreamFormat, StreamPacket, StreamSink, StreamStopReason } from '../../sdk/index.ts';

/** One reader of one format view. */
export interface ViewReader<F extends StreamFormat> {
  readonly peer: IngestPeer;
  readonly sink: StreamSink<F>;
  /** MPEG-TS: true once it got PAT/PMT and a random access point. */
  started: boolean;
}

/**
 * What every format view does: keep what a late reader needs, fan packets out, drop a reader that
 * fails. `push` is the publisher's (or a converter's) packet.
 */
export interface FormatView<F extends StreamFormat> {
  push(packet: StreamPacket<F>): void;
  join(reader: ViewReader<F>): void;
  /** Removes a reader without stopping it (it left); false when it was not there. */
  leave(reader: ViewReader<F>): boolean;
  /** Stops every reader with `reason` and forgets what was kept. */
  close(reason: StreamStopReason): void;
  readonly size: number;
  readers(): IterableIterator<ViewReader<F>>;
  /** What a converter made now needs first: FLV headers and GOP, or the MPEG-TS PAT and PMT. */
  primer(): StreamPacket<F>[];
}

/** One reader's failure is its own: a throwing `send` counts as "cannot keep up". */
export function deliver<F extends StreamFormat>(r: ViewReader<F>, batch: readonly StreamPacket<F>[]): boolean {
  try {
    return r.sink.send(batch) !== false;
  } catch {
    return false;
  }
}

/** Tells a reader it is no longer served; what its `stop` throws stays with it. */
export function stopReader<F extends StreamFormat>(r: ViewReader<F>, reason: StreamStopReason): void {
  try {
    r.sink.stop(reason);
  } catch {
    // the reader's own connection handles its errors; nothing more to do for it here
  }
}
