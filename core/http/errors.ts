import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ApiError, isApiError } from '../../sdk/index.ts';

/** Turns any error into the interface's Error body; unexpected ones are 500 and logged. */
export function toApiError(err: FastifyError | Error, log?: Logger): ApiError {
  if (isApiError(err)) return err;
  const fe = err as FastifyError;
  if (fe.validation) {
    const where = fe.validationContext ?? 'body';
    const details = fe.validation.map((v) => `${where}${v.instancePath || ''} ${v.message ?? 'is invalid'}`.trim());
    return new ApiError(400, where === 'body' ? 'Invalid JSON' : 'Bad Request', details, 'VALIDATION');
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError(400, 'Invalid JSON', [fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? "request doesn't contain any content" : fe.message], 'INVALID_JSON');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(400, 'Invalid JSON', ["request doesn't contain JSON content"], 'INVALID_MEDIA_TYPE');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'Payload Too Large', ['request body is larger than allowed'], 'BODY_TOO_LARGE');
    default:
  }
  if (err instanceof SyntaxError) return new ApiError(400, 'Invalid JSON', [err.message], 'INVALID_JSON');
  const status = fe.statusCode;
  if (status && status >= 400 && status < 500) return new ApiError(status, undefined, [fe.message], fe.code ?? `HTTP_${status}`);
  log?.error({ err }, 'unexpected error');
  return new ApiError(500, 'Internal Server Error', [scrubPaths(err.message)], 'INTERNAL');
}

/** Absolute server paths never reach a client (they stay in the log). */
export function scrubPaths(message: string): string {
  return message.replace(/(^|[\s'"(=:,])\/[^\s'"(),]*/g, '$1<path>');
}

export function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  if (reply.request.method === 'HEAD') {
    // status only (reference 2.2): a JSON type with no body makes clients (restreamer-ui) parse nothing and throw
    reply.removeHeader('content-type');
    return reply.code(err.status).send();
  }
  return reply.code(err.status).type('application/json; charset=utf-8').send(err.toBody());
}

export function errorHandler(log: Logger) {
  return (err: FastifyError, _req: FastifyRequest, reply: FastifyReply) => sendError(reply, toApiError(err, log));
}
