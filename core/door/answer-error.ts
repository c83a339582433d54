import type { ServerResponse } from 'node:http';
import { isApiError, type ErrorBody } from '../../sdk/errors.ts';

/*
 * Error answers of the file door, the Error body of the interface as the API's error handler
 * sends it (node leaves the body out of a HEAD answer by itself).
 */

/** Sends status `status` with the Error body and the `head` headers in front. */
export function refusal(res: ServerResponse, status: number, message: string, details: readonly string[], head: readonly string[] = []): void {
  sendErrorBody(res, status, { code: status, message, details: [...details] }, head);
}

/** Sends an Error body already built (a verdict from main). */
export function sendErrorBody(res: ServerResponse, status: number, body: ErrorBody, head: readonly string[] = []): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (res.req.method === 'HEAD') {
    // status only (reference 2.2): a JSON type with no body makes clients (restreamer-ui) parse nothing and throw
    res.writeHead(status, [...head, 'content-length', '0']);
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, [...head, 'content-type', 'application/json; charset=utf-8', 'content-length', String(Buffer.byteLength(text))]);
  res.end(text);
}

/**
 * An error thrown while answering: an ApiError becomes its status, Error body and headers; anything
 * else a 500 whose detail is logged by the caller, not sent.
 */
export function sendThrown(res: ServerResponse, err: unknown, head: readonly string[] = []): void {
  if (isApiError(err)) {
    sendErrorBody(res, err.status, err.toBody(), [...head, ...Object.entries(err.headers).flat()]);
    return;
  }
  sendErrorBody(res, 500, { code: 500, message: 'Internal Server Error', details: ['internal error'] }, head);
}
