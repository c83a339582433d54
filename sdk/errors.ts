/**
 * Errors that become the interface's Error body `{code, message, details}`.
 * `code` in the body is the HTTP status (as datarhei Core does); the stable
 * string `errorCode` names the cause for logs and tests.
 */

// the phrases of RFC 9110 (and 6585, 4918, 7725) as Go's net/http names them; not node:http's
// table: its ES facade loads undici at start (core/runtime/builtin.ts)
const REASONS: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 402: 'Payment Required', 403: 'Forbidden', 404: 'Not Found',
  405: 'Method Not Allowed', 406: 'Not Acceptable', 407: 'Proxy Authentication Required', 408: 'Request Timeout',
  409: 'Conflict', 410: 'Gone', 411: 'Length Required', 412: 'Precondition Failed', 413: 'Payload Too Large',
  414: 'URI Too Long', 415: 'Unsupported Media Type', 416: 'Range Not Satisfiable', 417: 'Expectation Failed',
  421: 'Misdirected Request', 422: 'Unprocessable Entity', 423: 'Locked', 424: 'Failed Dependency',
  425: 'Too Early', 426: 'Upgrade Required', 428: 'Precondition Required', 429: 'Too Many Requests',
  431: 'Request Header Fields Too Large', 451: 'Unavailable For Legal Reasons',
  500: 'Internal Server Error', 501: 'Not Implemented', 502: 'Bad Gateway', 503: 'Service Unavailable',
  504: 'Gateway Timeout', 505: 'HTTP Version Not Supported', 507: 'Insufficient Storage', 508: 'Loop Detected',
  511: 'Network Authentication Required',
};

/**
 * The standard reason phrase of an HTTP status.
 *
 * @example
 * reasonPhrase(507) // 'Insufficient Storage'
 */
function reasonPhrase(status: number): string {
  return REASONS[status] ?? 'Error';
}

/**
 * Brands: `Symbol.for` keys are shared by every copy of the SDK in one process, so an error made
 * by a plugin's own copy (a second install of `@media-core/sdk`) is still recognised by the core,
 * where `instanceof` would fail.
 */
const API_ERROR = Symbol.for('media-core.sdk.ApiError');
const BOOT_ERROR = Symbol.for('media-core.sdk.BootError');

function branded(e: unknown, brand: symbol): boolean {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[brand] === true;
}

/** The Error body of the interface. */
export interface ErrorBody {
  code: number;
  message: string;
  details: string[];
}

/**
 * An error with an HTTP status; thrown from a route handler it becomes the Error body.
 *
 * @example
 * throw new ApiError(404, 'Unknown process ID', ['unknown process'], 'PROCESS_NOT_FOUND');
 */
export class ApiError extends Error {
  readonly status: number;
  readonly details: string[];
  readonly errorCode: string;
  /** Extra headers to send with the error (e.g. WWW-Authenticate). */
  readonly headers: Record<string, string>;

  constructor(status: number, message?: string, details?: string[], errorCode?: string, headers?: Record<string, string>) {
    // a 4xx is an answer, not a fault: no stack is captured for it (the Basic challenge of every
    // upload makes one, and capturing a stack was most of its cost); a 5xx keeps its stack
    const limit = Error.stackTraceLimit;
    if (status < 500) Error.stackTraceLimit = 0;
    try {
      super(message ?? reasonPhrase(status));
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.name = 'ApiError';
    this.status = status;
    this.details = details ?? [this.message];
    this.errorCode = errorCode ?? `HTTP_${status}`;
    this.headers = headers ?? {};
  }

  toBody(): ErrorBody {
    return { code: this.status, message: this.message, details: this.details };
  }
}
// the brand lives on the prototype: set once, not per error
Object.defineProperty(ApiError.prototype, API_ERROR, { value: true });

/**
 * True for an `ApiError` from any copy of the SDK; use it instead of `instanceof ApiError`.
 *
 * @example
 * if (isApiError(err)) reply.code(err.status).send(err.toBody());
 */
export function isApiError(e: unknown): e is ApiError {
  return branded(e, API_ERROR);
}

/**
 * Short constructors with stable codes.
 *
 * @example
 * throw httpErrors.badRequest('Invalid JSON', ['unexpected end of input']);
 */
export const httpErrors = {
  badRequest: (message = 'Bad Request', details?: string[], code = 'BAD_REQUEST') => new ApiError(400, message, details, code),
  unauthorized: (details = ['Missing or invalid JWT token'], code = 'UNAUTHORIZED') => new ApiError(401, 'Unauthorized', details, code),
  forbidden: (details = ['Forbidden'], code = 'FORBIDDEN') => new ApiError(403, 'Forbidden', details, code),
  notFound: (message = 'Not Found', details?: string[], code = 'NOT_FOUND') => new ApiError(404, message, details, code),
  conflict: (message = 'Conflict', details?: string[], code = 'CONFLICT') => new ApiError(409, message, details, code),
  tooLarge: (details?: string[], code = 'PAYLOAD_TOO_LARGE') => new ApiError(413, 'Payload Too Large', details, code),
  insufficientStorage: (details?: string[], code = 'INSUFFICIENT_STORAGE') => new ApiError(507, 'Insufficient Storage', details, code),
  internal: (details?: string[], code = 'INTERNAL') => new ApiError(500, 'Internal Server Error', details, code),
};

/**
 * An error that stops the boot; the kernel prints it with its context. `code` is a stable
 * upper-case name of the cause (`PLUGIN_NOT_FOUND`, `PLUGIN_SDK_RANGE`, ...; default `BOOT`).
 *
 * @example
 * throw new BootError("Plugin 'rtmp' startup failed", { cause: err, code: 'RTMP_LISTEN' });
 */
export class BootError extends Error {
  readonly code: string;

  constructor(message: string, opts?: { cause?: unknown; code?: string }) {
    super(message, opts?.cause === undefined ? undefined : { cause: opts.cause });
    Object.defineProperty(this, BOOT_ERROR, { value: true });
    this.name = 'BootError';
    this.code = opts?.code ?? 'BOOT';
  }
}

/**
 * True for a `BootError` from any copy of the SDK.
 *
 * @example
 * if (isBootError(err)) process.stderr.write(`cannot start: ${err.message}\n`);
 */
export function isBootError(e: unknown): e is BootError {
  return branded(e, BOOT_ERROR);
}
