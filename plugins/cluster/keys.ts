import { clusterErrors } from './errors.ts';

/**
 * KV keys for ids NATS would refuse. A KV key is a subject: only `A-Za-z0-9 - _ = / .` are
 * allowed, `.` separates tokens, `*` and `>` are wildcards. Process ids are free text
 * (`restreamer-ui:ingest:<uuid>`, spaces, unicode), so a key holds the id's UTF-8 bytes in
 * base64url without padding (`A-Za-z0-9-_`, never a `.`), under a prefix token:
 * `p.cmVzdHJlYW1lci11aTppbmdlc3Q6MQ` is process `restreamer-ui:ingest:1`. Base64url keeps keys
 * short (4/3 of the bytes) and is reversible, so a watcher recovers the id from the key alone.
 * Keys with another first token (`import.<node>`) can never collide with an encoded id.
 */
export function encodeId(id: string): string {
  if (typeof id !== 'string' || id === '') throw clusterErrors.badId(String(id));
  return Buffer.from(id, 'utf8').toString('base64url');
}

export function decodeId(token: string): string {
  return Buffer.from(token, 'base64url').toString('utf8');
}

/** The key of a process in `core_processes`, `core_owners` and `core_assign`. */
export function processKey(id: string): string {
  return `p.${encodeId(id)}`;
}


/** The id of a key `<prefix>.<encoded id>`; undefined for any other key. */
export function keyId(prefix: string, key: string): string | undefined {
  const token = key.slice(prefix.length + 1);
  return key.startsWith(`${prefix}.`) && /^[A-Za-z0-9_-]+$/.test(token) ? decodeId(token) : undefined;
}

/** The process id of a key `processKey` made; undefined for any other key. */
export function idOfKey(key: string): string | undefined {
  return keyId('p', key);
}
