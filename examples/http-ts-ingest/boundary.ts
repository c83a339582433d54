import { ApiError, isApiError } from '@media-core/sdk';
import type { IngestPeer } from '@media-core/sdk';

/** Where the plugin logs; `RouteDeps.log`. */
export interface BoundaryLog { warn(obj: object, msg: string): void }

/** The publisher's request body broke off (reset, aborted, malformed chunk, cut for idling). */
export class BodyLost extends Error {}

/** A thrown value as one line of text. */
export function reasonOf(err: unknown): string {
  if (isApiError(err)) return err.details[0] ?? err.message;
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return code && !err.message.includes(code) ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}

/**
 * The fault boundary of one connection: whatever its handling threw is logged once, naming the
 * client's address and the reason, and becomes the answer (a refusal keeps its status; a body
 * that broke off is a 400 nobody will read; anything else a 500 without the internals). Nothing
 * thrown for one connection reaches fastify's generic 'unexpected error' or the process.
 */
export function atBoundary(log: BoundaryLog, side: 'publish' | 'play', peer: IngestPeer, err: unknown): ApiError {
  const at = { remote: peer.remote, protocol: 'httpts', stream: peer.stream };
  const reason = reasonOf(err);
  if (isApiError(err)) {
    log.warn({ ...at, code: err.errorCode }, `httpts ${side} refused: ${reason}`);
    return err;
  }
  if (err instanceof BodyLost) {
    log.warn(at, `httpts connection closed: ${reason}`);
    return new ApiError(400, 'Bad Request', [reason], 'HTTPTS_BODY_LOST');
  }
  log.warn(at, `httpts connection failed: ${reason}`);
  return new ApiError(500, 'Internal Server Error', ['the stream failed; see the log'], 'HTTPTS_FAILED');
}
