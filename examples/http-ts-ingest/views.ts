import type { StreamTable } from '@media-core/sdk';

/** A live stream as the REST list and the GraphQL field show it. */
export interface StreamView {
  name: string;
  remote: string;
  /** Unix seconds. */
  since: number;
  bytes_rx: number;
  readers: number;
}

/**
 * The streams this plugin's publishers push, from the service's stream table (the plugin keeps no
 * table of its own): `protocol` `httpts`, readers of every protocol counted.
 */
export function streamViews(streams: StreamTable): StreamView[] {
  return streams.list('httpts').map((s) => ({
    name: s.name, remote: s.publisher.remote, since: Math.floor(s.since / 1000),
    bytes_rx: s.publisher.traffic().rxBytes, readers: s.readers.length,
  }));
}
