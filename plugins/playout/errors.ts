import { ApiError } from '../../sdk/index.ts';

/** Errors of the playout routes, with stable codes (reference 4.5: 404 for anything unresolvable). */
export const playoutErrors = {
  /** Unknown process, an input without playout, the plugin disabled, or the relay not running. */
  unknown: (reason: string) => new ApiError(404, 'Unknown process or input', [reason], 'PLAYOUT_UNKNOWN'),
  /** The relay has not seen a source keyframe yet. */
  noKeyframe: () => new ApiError(404, 'Not Found', ['no keyframe has been received yet'], 'PLAYOUT_NO_KEYFRAME'),
  /** The request body could not be read (aborted, too large). */
  body: (reason: string) => new ApiError(400, 'Failed to read request body', [reason], 'PLAYOUT_BODY'),
  /** The error frame image does not decode. */
  badImage: (reason: string) => new ApiError(400, 'Bad Request', [reason], 'PLAYOUT_BAD_IMAGE'),
  /** `PUT .../stream` without a usable URL. */
  badUrl: (reason: string) => new ApiError(400, 'Bad Request', [reason], 'PLAYOUT_BAD_URL'),
  /** `PUT .../stream` to a file the caller or the process's maker may not read (an access plugin's `fs` policies). */
  forbidden: (reason: string) => new ApiError(403, 'Forbidden', [reason], 'PLAYOUT_FORBIDDEN'),
  /** The new stream's parameters differ from the current ones: the old source is kept. */
  mismatch: (reason: string) => new ApiError(400, 'Bad Request', [reason], 'PLAYOUT_STREAM_MISMATCH'),
  /** The relay failed in an unexpected way (an encoder crashed, ...). */
  internal: (reason: string) => new ApiError(500, 'Internal Server Error', [reason], 'PLAYOUT_INTERNAL'),
};

/** The reference's message when the pool has no free port (section 14). */
export function exhausted(min: number, max: number): string {
  return `no more ports available from range [${min},${max}]`;
}
