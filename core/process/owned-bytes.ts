/*
 * Bytes a cache keeps for long, in memory of their own. `Buffer.from(string)` and
 * `Buffer.concat` take anything under half of `Buffer.poolSize` (64 KiB on Node 24) from a shared
 * pool slab, and a Buffer kept in a cache pins its whole slab: one 40-byte line kept per process,
 * with a request's worth of other allocations between two of them, held 64 KiB each (issue 46).
 * This allocates exactly what it holds; use it only for bytes that outlive the request.
 */

/** The UTF-8 bytes of `text`, not from the shared pool. */
export function ownedBytes(text: string): Buffer {
  const length = Buffer.byteLength(text, 'utf8');
  const out = Buffer.allocUnsafeSlow(length);
  out.write(text, 0, length, 'utf8');
  return out;
}
