import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../sdk/index.ts';

/**
 * Deepest nesting of arrays and objects accepted in a JSON request body. Real clients send a few
 * levels (restreamer-ui metadata: under 10); 20,000 levels parse fine but then break every later
 * write of db.json (JSON.stringify overflows the stack), so they are refused before parsing.
 */
export const JSON_MAX_DEPTH = 128;

/** Nesting depth of a JSON text, counted without parsing (strings skipped); stops past `limit`. */
export function jsonDepth(text: string, limit = Infinity): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max && (max = depth) > limit) return max;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

/** Replaces the JSON parser of `app` with fastify's own behind the depth check. */
export function limitJsonDepth(app: FastifyInstance, maxDepth = JSON_MAX_DEPTH): void {
  const parse = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req: FastifyRequest, body, done) => {
    const text = body as string;
    if (jsonDepth(text, maxDepth) > maxDepth) {
      done(new ApiError(400, 'Invalid JSON', [`the JSON is nested deeper than ${maxDepth} levels`], 'JSON_TOO_DEEP'), undefined);
      return;
    }
    parse(req, text, done);
  });
}
