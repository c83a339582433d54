/*
 * Stream names as the reference (datarhei Core rtmp/rtmp.go) reads them: the channel key is the
 * URL path, the token comes from `?token=` or else from the path's last element. Pure functions.
 */

/** What a client's `publish` / `play` request resolves to. */
export interface StreamTarget {
  /** The channel key, e.g. `/live/abc.stream` (no query, no token). */
  path: string;
  /** The token the client gave (query or path suffix), if any. */
  token?: string;
  /** The other query parameters. */
  params: Record<string, string>;
}

/** A refusal of a name or token, in the reference's log words. */
export interface NameRefusal {
  kind: 'bad_request' | 'unauthorized' | 'forbidden';
  reason: string;
}

// a path segment: no separators, whitespace or control characters, not `.`/`..`
const SEGMENT = /^[^\s/\\?#\u0000-\u001f\u007f]+$/;

/**
 * Joins the `connect` app and the stream name into a path, checking every segment; ffmpeg puts
 * nested folders into the app (`rtmp://h/a/b/c.stream` is app `a/b`, name `c.stream`).
 */
export function streamPath(app: string, name: string): string | undefined {
  const segments = `${app}/${name}`.split('/').filter((s) => s !== '');
  if (segments.length === 0) return undefined;
  for (const s of segments) if (!SEGMENT.test(s) || s === '.' || s === '..') return undefined;
  return '/' + segments.join('/');
}

/**
 * Resolves path and token. With a configured token and no `token` query parameter, the last path
 * element is the token (`/live/abc.stream/SECRET`); without a configured token the path is kept.
 */
export function resolveTarget(path: string, query: Readonly<Record<string, string>>, configuredToken: string): StreamTarget {
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(query)) if (k !== 'token') params[k] = v;
  if ('token' in query) return { path, token: query.token, params };
  if (!configuredToken) return { path, params };
  const cut = path.lastIndexOf('/');
  if (cut <= 0) return { path: '/', token: path.slice(1), params };
  return { path: path.slice(0, cut), token: path.slice(cut + 1), params };
}

/** The token rule of publish and play: a configured token must be given exactly. */
export function checkToken(target: StreamTarget, configuredToken: string): NameRefusal | undefined {
  if (!configuredToken) return undefined;
  if (target.token === undefined || target.token === '') return { kind: 'unauthorized', reason: 'no token given' };
  return target.token === configuredToken ? undefined : { kind: 'forbidden', reason: 'invalid token' };
}

/** Publishing is only allowed below `rtmp.app` (`/` allows every path); playing is not checked. */
export function checkApp(path: string, app: string): NameRefusal | undefined {
  if (app === '/' || app === '') return undefined;
  const base = app.endsWith('/') ? app.slice(0, -1) : app;
  if (path === base || path.startsWith(base + '/')) return undefined;
  return { kind: 'forbidden', reason: `the stream path must start with the app ${base}` };
}
