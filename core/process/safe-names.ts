import { ApiError, wellFormedText } from '../../sdk/index.ts';

/**
 * Rules for names clients choose that end up as dictionary keys and URL segments: process ids
 * and metadata keys. Accepted: 1 to 256 UTF-16 code units of well-formed Unicode (no lone
 * surrogate: it could not be written to a URL again), no control characters (U+0000-U+001F,
 * U+007F-U+009F), and none of the prototype names `__proto__`, `constructor`, `prototype`.
 * Everything else (letters of any script, digits, spaces, `-_.:~@+=,` ..., e.g.
 * `restreamer-ui:ingest:<uuid>`) is accepted as the reference does.
 */
export const NAME_MAX_LENGTH = 256;
const PROTO_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Why a name is refused, or undefined when it is safe. */
export function unsafeName(name: string): string | undefined {
  if (name.length > NAME_MAX_LENGTH) return `longer than ${NAME_MAX_LENGTH} characters`;
  if (!wellFormedText(name)) return 'not valid Unicode (lone surrogate)';
  if (CONTROL.test(name)) return 'contains a control character';
  if (PROTO_NAMES.has(name)) return `"${name}" is reserved`;
  return undefined;
}

/** A metadata key (global or per process): 400 when unsafe. */
export function checkKey(key: string): void {
  const why = unsafeName(key);
  if (why) throw new ApiError(400, 'Invalid key', [`the key is ${why}`], 'METADATA_INVALID_KEY');
}

/** A process id: 400 when unsafe. */
export function checkId(id: string): void {
  const why = unsafeName(id);
  if (why) throw new ApiError(400, 'Invalid process ID', [`the ID is ${why}`], 'PROCESS_INVALID_ID');
}
