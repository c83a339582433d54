import type { FastifyRequest } from 'fastify';
import { ApiError, type HttpScope } from '../../sdk/index.ts';

/*
 * Request decoding as the reference's Go handlers do it (reference 2.1), in one place for every
 * route instead of per field:
 * - a JSON `null` where the route's schema wants no null means "not sent" (encoding/json leaves
 *   the field alone), except for lists, which null empties; list items that are null become the
 *   item type's zero value;
 * - object keys match the schema's property names case-insensitively when no exact key is there;
 * - a route without a body schema that never takes a body (DELETE, OPTIONS) ignores the body and
 *   its Content-Type, so clients that send `Content-Type: application/json` on every method work;
 * - a route with a body schema refuses a non-JSON Content-Type (text/plain would otherwise be
 *   parsed as a string and judged by the schema).
 * - a query parameter given more than once counts with its first value (echo's QueryParam), where
 *   the schema wants a single string.
 * Wrong types still fail the schema afterwards.
 */

type Schema = Record<string, unknown> & { type?: unknown; properties?: Record<string, Schema>; items?: Schema };

const BODYLESS = new Set(['DELETE', 'OPTIONS']);
/** The type a body nobody reads is given: read (within the body limit) and dropped, whatever it was sent as. */
const IGNORED = 'application/x-media-core-ignored-body';

export function installLenientDecoding(app: HttpScope): void {
  app.addContentTypeParser(IGNORED, { parseAs: 'buffer' }, (_req, _body, done) => done(null, undefined));
  app.addHook('onRequest', async (request) => {
    if (!BODYLESS.has(request.method) || request.is404) return;
    // (deleting the type left fastify no parser for a body sent with it: 400 on a DELETE with a body)
    if (bodySchemaOf(request) === undefined) request.headers['content-type'] = IGNORED;
  });
  app.addHook('preValidation', async (request) => {
    firstQueryValues(request);
    const schema = bodySchemaOf(request);
    if (schema === undefined) return;
    const type = request.headers['content-type'];
    if (type !== undefined && !/^application\/json/i.test(type)) {
      throw new ApiError(400, 'Invalid JSON', ["request doesn't contain JSON content"], 'INVALID_MEDIA_TYPE');
    }
    if (request.body !== undefined && request.body !== null) request.body = lenient(schema, request.body);
  });
}

function bodySchemaOf(request: FastifyRequest): Schema | undefined {
  if (request.is404) return undefined;
  return request.routeOptions.schema?.body as Schema | undefined;
}

function firstQueryValues(request: FastifyRequest): void {
  const props = (request.routeOptions.schema?.querystring as Schema | undefined)?.properties;
  const q = request.query as Record<string, unknown> | undefined;
  if (!props || !q || typeof q !== 'object') return;
  for (const [k, v] of Object.entries(q)) if (Array.isArray(v) && props[k]?.type === 'string') q[k] = v[0];
}

/** True when the schema itself accepts `null` (or anything). */
function acceptsNull(s: Schema): boolean {
  if (s.type === undefined && s.anyOf === undefined && s.oneOf === undefined) return true;
  if (s.type === 'null' || (Array.isArray(s.type) && s.type.includes('null'))) return true;
  const alts = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  return alts?.some(acceptsNull) ?? false;
}

/** What Go's decoder leaves in a fresh list element for which the JSON says `null`. */
function zeroOf(s: Schema): unknown {
  switch (s.type) {
    case 'array': return [];
    case 'object': return {};
    case 'string': return '';
    case 'number': case 'integer': return 0;
    case 'boolean': return false;
    default: return null;
  }
}

/** The value decoded the Go way against `s`; returns a new value, never mutates the input. */
export function lenient(s: Schema, v: unknown): unknown {
  if (Array.isArray(v)) {
    const item = s.type === 'array' ? s.items : undefined;
    if (!item) return v;
    return v.map((x) => (x === null && !acceptsNull(item) ? zeroOf(item) : lenient(item, x)));
  }
  if (v === null || typeof v !== 'object' || s.type !== 'object' || !s.properties) return v;
  const props = s.properties;
  const names = Object.keys(props);
  const required = new Set((s.required as string[] | undefined) ?? []);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(v as Record<string, unknown>)) {
    const name = key in props ? key : (names.find((n) => n.toLowerCase() === key.toLowerCase() && !(n in v)) ?? key);
    const p = props[name];
    if (!p) {
      // unknown fields are ignored, as everywhere in the reference (dropped only where the schema forbids them)
      if (s.additionalProperties !== false) out[name] = value;
      continue;
    }
    if (value === null && !acceptsNull(p)) {
      // a null list is an empty list, except where the list is required: Go's "required" fails on it
      if (p.type === 'array' && !required.has(name)) out[name] = [];
      continue;
    }
    out[name] = lenient(p, value);
  }
  return out;
}
