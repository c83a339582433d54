import { ApiError } from '../../sdk/index.ts';

/**
 * Errors of the S3 filesystems, with stable codes (documented in the README). An S3 store that is
 * down or slow answers 503/504 for reads and listings; writes are buffered instead (507 only when
 * the buffer is full).
 */
export const s3Errors = {
  /** The store refused the connection, reset it or answered 5xx. */
  unavailable: (fs: string, detail: string) => new ApiError(503, 'Service Unavailable', [`s3 filesystem '${fs}': ${detail}`], 'S3_UNAVAILABLE'),
  /** The store did not answer within the call's deadline. */
  timeout: (fs: string, what: string) => new ApiError(504, 'Gateway Timeout', [`s3 filesystem '${fs}': ${what} timed out`], 'S3_TIMEOUT'),
  /** The store refused the credentials or the bucket (403 and the like). */
  denied: (fs: string, detail: string) => new ApiError(502, 'Bad Gateway', [`s3 filesystem '${fs}': ${detail}`], 'S3_DENIED'),
  /** The upload buffer (bytes not yet stored in S3) has no room for this file. */
  bufferFull: (fs: string) => new ApiError(507, 'Insufficient Storage', [`s3 filesystem '${fs}': upload buffer full, S3 is not taking writes`], 'S3_BUFFER_FULL'),
  /** A streamed (multipart) upload failed: nothing was stored. */
  uploadFailed: (fs: string, detail: string) => new ApiError(503, 'Service Unavailable', [`s3 filesystem '${fs}': upload failed: ${detail}`], 'S3_UPLOAD_FAILED'),
};
