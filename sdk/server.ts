import { createServiceRef } from './refs.ts';

/** Facts about the running HTTP listener, known once it listens. */
export interface ServerInfo {
  /** Port of the HTTP listener: the configured one from the start; where the config says port 0, 0 until it listens, then the one it got. */
  port(): number;
  /** Host for URLs that local programs (ffmpeg) use to reach the service: `localhost` when unbound. */
  host(): string;
  /** Unix milliseconds of this app's start (reset by a reload). */
  readonly startedAt: number;
  /**
   * Receives the bytes each client address exchanged with the HTTP listener (every loop that
   * serves it, headers included), about once a second and when a connection closes, until the app
   * closes. Optional: a stand-in of a test may lack it.
   */
  onTraffic?(fn: (traffic: readonly ClientTraffic[]) => void): void;
}

/** One client address's bytes since the last report. */
export interface ClientTraffic {
  /** The TCP peer, normalized (`127.0.0.1`, `::1`). */
  peer: string;
  rx: number;
  tx: number;
}

/**
 * @example
 * deps: { server: serverRef },
 * value: () => `http://${ctx.deps.server.host()}:${ctx.deps.server.port()}/memfs`
 */
export const serverRef = createServiceRef<ServerInfo>('server');
