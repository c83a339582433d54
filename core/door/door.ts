import type { IncomingMessage, ServerResponse } from 'node:http';
import { cleanFsPath, isPlainFsPath } from '../../sdk/fs-path.ts';
import { sendThrown } from './answer-error.ts';
import { answerRead, corsHead } from './read.ts';
import { answerWrite } from './write.ts';
import type { DoorEnv, DoorMount, Maybe } from './types.ts';

const METHODS = 'GET, HEAD, PUT, POST, DELETE, PATCH';
/** URL paths a door remembers the clean path of (all forgotten when full), and the longest one. */
const PATHS_MAX = 2048;
const PATH_MEMO_CHARS = 256;
const HEADERS = 'Origin, Content-Length, Content-Type, Authorization';

/**
 * The file door: the one code that serves and stores the files of the public mounts over HTTP,
 * run unchanged before main's router and in every serving thread. `handle` answers a request of
 * a mount (true), or leaves it (false: the router on main, main from a thread), or decides after
 * I/O (a promise; nothing was sent and the body is unread when it resolves false).
 */
export class FileDoor {
  readonly env: DoorEnv;
  /** Longest prefix first, the catch-all (``) last. */
  #mounts: DoorMount[] = [];
  /**
   * The clean path below a prefixed mount per URL path: a player asks for the same few URLs again
   * and again, and a string known before hashes and compares at once in the filesystem's lookup.
   */
  #paths = new Map<string, { m: DoorMount; path: string }>();

  constructor(env: DoorEnv, mounts: readonly DoorMount[] = []) {
    this.env = env;
    this.setMounts(mounts);
  }

  setMounts(mounts: readonly DoorMount[]): void {
    this.#mounts = [...mounts].sort((a, b) => b.prefix.length - a.prefix.length);
    this.#paths = new Map();
  }

  get mounts(): readonly DoorMount[] {
    return this.#mounts;
  }

  /** Whether a cleaned path's first segment is one the catch-all mount leaves to the router. */
  #reserved(m: DoorMount, path: string): boolean {
    const slash = path.indexOf('/', 1);
    const first = slash < 0 ? path.slice(1) : path.slice(1, slash);
    const heads = this.env.routeHeads();
    return m.reserved.has(first) || heads.has(first) || heads.has(':');
  }

  /** The mount a URL's path falls under, or undefined. */
  #find(pathname: string): DoorMount | undefined {
    for (const m of this.#mounts) {
      const p = m.prefix;
      if (p !== '') {
        if (pathname.startsWith(p) && pathname.charCodeAt(p.length) === 47) return m;
        continue;
      }
      const slash = pathname.indexOf('/', 1);
      // as the file is found: `/%61pi/x` is under `/api` (the router's), not the disk's `api` folder
      const first = decodedSegment(slash < 0 ? pathname.slice(1) : pathname.slice(1, slash));
      const heads = this.env.routeHeads();
      return m.reserved.has(first) || heads.has(first) || heads.has(':') ? undefined : m;
    }
    return undefined;
  }

  handle(req: IncomingMessage, res: ServerResponse): Maybe<boolean> {
    const method = req.method;
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const pathname = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? '' : url.slice(q + 1);
    const known = this.#paths.get(pathname);
    let m: DoorMount | undefined;
    let path: string;
    if (known !== undefined) {
      ({ m, path } = known);
    } else {
      m = this.#find(pathname);
      if (!m) return false;
      const raw = pathname.slice(m.prefix.length);
      try {
        path = raw.length > 1 && isPlainFsPath(raw) ? raw : cleanFsPath(raw);
      } catch (err) {
        sendThrown(res, err, ['vary', 'Origin', ...corsHead(this.env, req)]);
        return true;
      }
      // the catch-all's reserved heads as the file is found (`/./api/x`, `/api%2fx`: the router's, not the disk's api folder)
      if (m.prefix === '' && path !== raw && this.#reserved(m, path)) return false;
      // the catch-all's answer depends on the routes of the moment: not remembered; nor long paths (memory)
      if (m.prefix !== '' && pathname.length <= PATH_MEMO_CHARS) {
        if (this.#paths.size >= PATHS_MAX) this.#paths.clear();
        this.#paths.set(pathname, { m, path });
      }
    }
    if (method === 'GET' || method === 'HEAD') {
      return answerRead(this.env, m, req, res, path, query);
    }
    if (method === 'OPTIONS') {
      if (!m.preflight) return false;
      this.#preflight(req, res);
      return true;
    }
    if (m.writes && (method === 'PUT' || method === 'POST' || method === 'DELETE')) {
      const remote = this.env.clientOf(req);
      if (remote === undefined) return false;
      // a thread receives the body first, or leaves the request to main unread
      const taken = this.env.takesWrite ? this.env.takesWrite(m, req, res, path) : true;
      const go = (yes: boolean) => {
        if (yes) void answerWrite(this.env, m, req, res, path, remote);
        return yes;
      };
      return typeof taken === 'boolean' ? go(taken) : taken.then(go);
    }
    return false;
  }

  /** `OPTIONS`: 204, with the preflight headers when the origin is allowed. */
  #preflight(req: IncomingMessage, res: ServerResponse): void {
    const out = ['vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers'];
    const origin = req.headers.origin;
    const allowed = origin === undefined ? undefined : this.env.cors.allow(origin);
    if (allowed !== undefined) {
      out.push('access-control-allow-origin', allowed, 'access-control-allow-credentials', 'true', 'access-control-allow-methods', METHODS,
        'access-control-allow-headers', HEADERS, 'access-control-max-age', '86400');
    }
    res.writeHead(204, out);
    res.end();
  }
}

/** A path segment percent-decoded (as it is when its file is looked up); one that does not decode as it is. */
function decodedSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try { return decodeURIComponent(segment); } catch { return segment; }
}
