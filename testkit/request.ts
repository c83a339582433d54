import type { LightMyRequestResponse } from 'fastify';

/** A request in the shape the project's tests use (see test/helpers/app.ts). */
export interface KitRequest {
  /** JSON body (encoded, content-type set). */
  body?: unknown;
  /** Raw body, sent as is; a stream for a body the test writes while the app reads it. */
  raw?: string | Buffer | NodeJS.ReadableStream;
  headers?: Record<string, string>;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** The client address the app sees (default 127.0.0.1). */
  remoteAddress?: string;
}

/** A response: status, Fetch-style headers, the body decoded when JSON, and the text. */
export interface KitResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** Turns an inject response into the shape of a fetch-based test response. */
export function toResponse(res: LightMyRequestResponse): KitResponse {
  const headers = new Headers();
  for (const [k, v] of Object.entries(res.headers)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) headers.append(k, String(one));
  }
  const text = res.payload;
  let body: unknown = text;
  if ((headers.get('content-type') ?? '').includes('json') && text !== '') {
    try { body = JSON.parse(text); } catch { /* keep the text */ }
  }
  return { status: res.statusCode, headers, body, text };
}
