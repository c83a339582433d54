import { ApiError } from './errors.ts';

/**
 * Path safety for filesystem routes. A request path is decoded once, here, and every `..`
 * segment (plain or encoded as `%2e%2e`, `%2F..`), absolute path smuggled in (`//etc`,
 * `%2Fetc`), backslash, NUL byte and malformed escape is refused with 400, so no request can
 * name anything outside a filesystem's root. `.` segments and a trailing slash are dropped.
 */

function badPath(detail: string): ApiError {
  return new ApiError(400, 'Bad Request', [detail], 'FS_BAD_PATH');
}

/**
 * Cleans a path inside a filesystem: decoded, rooted, no `.` segments, no trailing slash (`/`
 * for the root). Throws ApiError 400 for `..`, inner empty segments, backslashes, NUL bytes and
 * bad escapes.
 *
 * @example
 * cleanFsPath('/a/./b/c.ts/') // '/a/b/c.ts'
 * cleanFsPath('/a/%2e%2e/b')  // throws 400
 */
export function cleanFsPath(raw: string, encoded = true): string {
  let p = raw;
  if (encoded && p.includes('%')) {
    try {
      p = decodeURIComponent(p);
    } catch {
      throw badPath('invalid escape in path');
    }
  }
  if (p.includes('\0')) throw badPath('NUL byte in path');
  if (p.includes('\\')) throw badPath('backslash in path');
  const segs = p.split('/');
  const out: string[] = [];
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    // an empty segment inside the path is an absolute path smuggled in (`/memfs//etc/passwd`)
    if (seg === '' && i > 0 && i < segs.length - 1) throw badPath('absolute path inside the path');
    if (seg === '' || seg === '.') continue;
    if (seg === '..') throw badPath('path must not contain ..');
    out.push(seg);
  }
  return '/' + out.join('/');
}

/**
 * True when a raw request path is already clean: rooted, no escapes, no `//`, no `.` segment,
 * no backslash or NUL, no trailing slash. The common case, checked without allocating.
 *
 * @example
 * isPlainFsPath('/live/x.m3u8'); // true
 * isPlainFsPath('/live/%78.ts'); // false: needs cleanFsPath
 */
export function isPlainFsPath(p: string): boolean {
  return p.charCodeAt(0) === 47 /* / */ && !p.includes('%') && !p.includes('//') && !p.includes('/.')
    && !p.includes('\\') && !p.includes('\0') && p.charCodeAt(p.length - 1) !== 47;
}

/**
 * The cleaned path inside a filesystem from a request URL (`request.url`, raw, with query):
 * the part after `prefix` (`/memfs`, `/api/v3/fs/mem`, or `` for the disk's `/`).
 *
 * @example
 * fsPathFromUrl('/memfs/live/x.m3u8?session=1', '/memfs') // '/live/x.m3u8'
 */
export function fsPathFromUrl(url: string, prefix: string): string {
  const q = url.indexOf('?');
  const rest = (q < 0 ? url : url.slice(0, q)).slice(prefix.length);
  if (rest.length > 1 && isPlainFsPath(rest)) return rest;
  return cleanFsPath(rest);
}

/**
 * The file name's extension, lowercased, with its dot (`.m3u8`), or `` when it has none.
 *
 * @example
 * fsExtension('/a/B.TS'); // '.ts'
 */
export function fsExtension(path: string): string {
  const slash = path.lastIndexOf('/');
  const dot = path.lastIndexOf('.');
  return dot > slash + 1 ? path.slice(dot).toLowerCase() : '';
}
