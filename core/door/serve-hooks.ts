import type { FileDoorMiss } from '../../sdk/file-door.ts';
import type { FsServeHooks, FsServeRequest } from '../../sdk/fs-hooks.ts';

/* The door's side of the file-serving hooks (fsServeHooksRef): whether to call them, their playlist rewrites, what to report. */

/**
 * True when some tap needs to see GET/HEAD requests of a mount (else the mount skips the hooks).
 *
 * @example
 * if (fsServeTapped(hooks)) return slowPath(request, reply); // someone counts or may refuse
 */
export function fsServeTapped(hooks: FsServeHooks | undefined): hooks is FsServeHooks {
  return hooks !== undefined && (hooks.preServe.isUsed() || hooks.onServed.isUsed() || hooks.transformPlaylist.isUsed());
}

/**
 * Runs `transformPlaylist` for a mount, remembering per file version its text and the Buffers of
 * the bodies the taps returned: a viewer reloads the same playlist version several times, and a
 * tap that hands back the same string (a plugin that keeps its rewrite per viewer) then
 * costs a map lookup instead of a decode and an encode. One per mount.
 *
 * @example
 * const rewrites = new PlaylistRewrites();
 * const body = rewrites.apply(hooks, request, path, file.data) ?? file.data;
 */
export class PlaylistRewrites {
  readonly #text = new WeakMap<Buffer, string>();
  readonly #bodies = new WeakMap<Buffer, Map<string, Buffer>>();

  /**
   * The body after `transformPlaylist`, or undefined when no tap changed it (or none is tapped,
   * or the path is no `.m3u8`).
   */
  apply(hooks: FsServeHooks, request: FsServeRequest, path: string, data: Buffer): Buffer | undefined {
    if (!path.endsWith('.m3u8') || !hooks.transformPlaylist.isUsed()) return undefined;
    let text = this.#text.get(data);
    if (text === undefined) {
      text = data.toString('utf8');
      this.#text.set(data, text);
    }
    const out = hooks.transformPlaylist.call(text, request);
    if (out === text) return undefined;
    let bodies = this.#bodies.get(data);
    if (!bodies) {
      bodies = new Map();
      this.#bodies.set(data, bodies);
    }
    let buf = bodies.get(out);
    if (!buf) {
      // a Buffer of its own (not a slice of the shared pool), like the files memfs serves
      buf = Buffer.allocUnsafeSlow(Buffer.byteLength(out, 'utf8'));
      buf.write(out, 'utf8');
      // bounded: per-request bodies (fresh ids in every answer) must not pile up
      if (bodies.size >= 256) bodies.clear();
      bodies.set(out, buf);
    }
    return buf;
  }
}

/**
 * Bytes a finished response put on the wire: its header block (node keeps it as `_header`) plus the body.
 *
 * @example
 * res.on('finish', () => hooks.onServed.call({ ...event, bytes: responseBytes(res, body.length) }));
 */
export function responseBytes(res: object, body: number): number {
  const header = (res as { _header?: unknown })._header;
  return (typeof header === 'string' ? header.length : 0) + body;
}

/**
 * Marks a request as a door miss before the door leaves it to the router: `fileDoorMiss` (the
 * SDK's) reads it, under the same registered symbol.
 */
export function markFileDoorMiss(req: object, miss: FileDoorMiss): void {
  (req as Record<symbol, FileDoorMiss>)[Symbol.for('core.files.miss')] = miss;
}
