import { ApiError, Type } from '../../sdk/index.ts';

/**
 * The body of a metadata PUT: any JSON value, `null` included. Declaring it as the route's body
 * makes the front door treat the route as one that takes JSON (Content-Type checked, the body
 * never dropped as on DELETE).
 */
export const AnyJson = Type.Unknown({ description: 'any JSON value; null removes the key' });

/**
 * A request without any body reaches the handler as `undefined` (no Content-Type, length 0);
 * the reference's binder refuses it, and taking it as `null` would delete the key.
 */
export function metadataBody(body: unknown): unknown {
  if (body === undefined) throw new ApiError(400, 'Invalid JSON', ["request doesn't contain any content"], 'INVALID_JSON');
  return body;
}
