import { ApiError, refusalCode, type IngestRefusal } from '@media-core/sdk';

/** Errors of the HTTP MPEG-TS ingest, with stable codes. */
export const httptsErrors = {
  /** The name does not match the `names` setting. */
  badName: (name: string) => new ApiError(400, 'Bad Request', [`invalid stream name '${name}'`], 'HTTPTS_BAD_NAME'),
  /** Somebody already publishes this stream. */
  busy: (name: string) => new ApiError(409, 'Conflict', [`stream '${name}' is already being published`], 'HTTPTS_STREAM_BUSY'),
  /** `max_streams` streams are live. */
  full: (max: number) => new ApiError(503, 'Service Unavailable', [`at most ${max} streams at once`], 'HTTPTS_TOO_MANY_STREAMS'),
  /** Nobody publishes this stream now. */
  notLive: (name: string) => new ApiError(404, 'Not Found', [`stream '${name}' is not live`], 'HTTPTS_NOT_LIVE'),
  /** A read without the key the placeholder hands out. */
  badKey: () => new ApiError(403, 'Forbidden', ['reading needs the key of the {httpts} placeholder'], 'HTTPTS_BAD_KEY'),
  /** A `prePublish`/`prePlay` tap (this plugin's token rule, session limits, a vendor policy) said no. */
  refused: (r: IngestRefusal) => new ApiError(refusalCode(r, 'http'), r.reason, [r.reason], 'HTTPTS_REFUSED'),
};
