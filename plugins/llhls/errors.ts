// its file, not the SDK's index: a serving thread's view (view.ts) answers with these too
import { ApiError } from '../../sdk/errors.ts';

/**
 * Errors of the LL-HLS packager, with stable codes: the muxer's (`Fmp4Error`: a sequence header it
 * cannot package) and the playlist's (`llhlsErrors`, answers to clients). A blocking playlist reload (RFC 8216bis 6.2.5.2)
 * that cannot be served is refused with 400 at once; one that waits too long is 503.
 */
export const llhlsErrors = {
  /** `_HLS_msn` or `_HLS_part` is not a non-negative integer. */
  malformed: (name: string, value: string) => new ApiError(400, 'Bad Request',
    [`${name} must be a non-negative integer, not ${JSON.stringify(value.slice(0, 40))}`], 'LLHLS_MALFORMED_ASK'),
  /** `_HLS_part` without `_HLS_msn`. */
  partWithoutMsn: () => new ApiError(400, 'Bad Request', ['_HLS_part needs _HLS_msn'], 'LLHLS_PART_WITHOUT_MSN'),
  /** An ask more than two segments (or the Advance Part Limit of parts) past the live edge. */
  tooFarAhead: (detail: string) => new ApiError(400, 'Bad Request', [detail], 'LLHLS_TOO_FAR_AHEAD'),
  /** `_HLS_skip` other than `YES` or `v2`. */
  badSkip: (value: string) => new ApiError(400, 'Bad Request',
    [`_HLS_skip must be YES or v2, not ${JSON.stringify(value.slice(0, 40))}`], 'LLHLS_BAD_SKIP'),
  /** A playlist request without the right `?token=` (`llhls.token`). */
  token: () => new ApiError(401, 'Unauthorized', ['the playlist needs the right token (?token=)'], 'LLHLS_TOKEN'),
  /** A user's key whose `hls` policies do not let it play this stream (the iam plugin). */
  forbidden: (reason: string) => new ApiError(403, 'Forbidden', [reason], 'LLHLS_FORBIDDEN'),
  /** A `prePlay` tap refused the viewer: its kind's status (`refusalCode(…, 'http')`), its reason. */
  refused: (status: number, reason: string) => new ApiError(status, 'Refused', [reason], 'LLHLS_REFUSED'),
  /** More streams than `llhls.max_streams` would be packaged at once. */
  limit: (max: number) => new ApiError(503, 'Service Unavailable',
    [`${max} streams are packaged already (llhls.max_streams)`], 'LLHLS_LIMIT'),
  /** A write or delete of the `llhls` filesystem: it holds what the packager makes, nothing else. */
  readOnly: () => new ApiError(403, 'Forbidden', ['the llhls filesystem is read-only'], 'LLHLS_READ_ONLY'),
  /** The asked segment or part did not come within three target durations. */
  reloadTimeout: (msn: number, part: number | undefined) => new ApiError(503, 'Service Unavailable',
    [`segment ${msn}${part === undefined ? '' : ` part ${part}`} did not come in time`], 'LLHLS_RELOAD_TIMEOUT'),
};

/** Stable codes of the muxer's errors. */
export type Fmp4ErrorCode =
  /** A video sequence header whose AVCDecoderConfigurationRecord or SPS does not parse. */
  | 'LLHLS_BAD_AVC_CONFIG'
  /** An audio sequence header whose AudioSpecificConfig does not parse (or is not one ADTS can say). */
  | 'LLHLS_BAD_AAC_CONFIG'
  /** A sequence header of a codec the muxer does not package (not H.264 or AAC; Enhanced RTMP). */
  | 'LLHLS_UNSUPPORTED_CODEC';

/** A muxer error; `code` is stable, for logs, tests and the packager's decisions. */
export class Fmp4Error extends Error {
  readonly code: Fmp4ErrorCode;
  constructor(code: Fmp4ErrorCode, message: string) {
    super(message);
    this.code = code;
    this.name = 'Fmp4Error';
  }
}
