import { createServiceRef } from './refs.ts';

/** Facts about the running HTTP listener, known once it listens. */
export interface ServerInfo {
  /** Port the HTTP listener is bound to (the real one when the config says port 0). */
  port(): number;
  /** Host for URLs that local programs (ffmpeg) use to reach the service: `localhost` when unbound. */
  host(): string;
  /** Unix milliseconds of this app's start (reset by a reload). */
  readonly startedAt: number;
}

/**
 * @example
 * deps: { server: serverRef },
 * value: () => `http://${ctx.deps.server.host()}:${ctx.deps.server.port()}/memfs`
 */
export const serverRef = createServiceRef<ServerInfo>('server');
