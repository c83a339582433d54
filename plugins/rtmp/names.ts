/*
 * Stream names as the reference (datarhei Core rtmp/rtmp.go) reads them: the channel key is the
 * URL path, the token comes from `?token=` or else from the path's last element. Pure functions.
 */

import { streamNameProblem } from '../../sdk/index.ts';

/** What a client's `publish` / `play` request resolves to. */
export interface StreamTarget {
  /** The channel key, e.g. `/live/abc.stream` (no query, no token). */
  path: string;
  /** The token the client gave (query or path suffix), if any. */
  token?: string;
  /** Where the token came from: `?token=`, or the last path element (only with a configured token). */
  tokenFrom?: 'query' | 'path';
  /** The other query parameters. */
  params: Record<string, string>;
}

/** A refusal of a name or token, in the reference's log words. */
export interface NameRefusal {
  kind: 'bad_request' | 'unauthorized' | 'forbidden';
  reason: string;
}

/** The path and query a client asked for, before the token is taken out. */
export interface RequestedStream {
  path: string;
  query: Record<string, string>;
}

/**
 * The stream a client asked for, from the `connect` app and the `publish`/`play` name as the
 * client sent them. ffmpeg splits a URL at its second `/`: `rtmp://h/live/x.stream?token=T` is
 * app `live`, name `x.stream?token=T`; `rtmp://h/a/b/c.stream` is app `a/b`, name `c.stream`;
 * a one-element URL (`{rtmp,name=x.stream}` with `rtmp.app` `/`) is app `x.stream?token=T` and an
 * empty name. So the app may carry the query, and the name may be empty. Names are taken
 * literally (no percent-decoding): `%2e%2e` stays a name, never `..`.
 */
export function requestedStream(app: string, name: string, nameQuery: Readonly<Record<string, string>>): RequestedStream | NameRefusal {
  const q = app.indexOf('?');
  const appPath = q < 0 ? app : app.slice(0, q);
  const query: Record<string, string> = Object.create(null);
  if (q >= 0) for (const [k, v] of new URLSearchParams(app.slice(q + 1))) if (!(k in query)) query[k] = v;
  Object.assign(query, nameQuery);
  const segments = `${appPath}/${name}`.split('/').filter((s) => s !== '');
  if (segments.length === 0) return { kind: 'bad_request', reason: 'no stream name' };
  const bad = streamNameProblem(segments.join('/'));
  if (bad) return { kind: 'bad_request', reason: `invalid stream name: ${bad}` };
  return { path: '/' + segments.join('/'), query };
}

/** How a request is shown in a log line when it was refused before it had a path: bounded, query cut. */
export function shownRequest(app: string, name: string): string {
  return `/${app.split('?')[0]}/${name}`.replace(/\/+/g, '/').slice(0, 200);
}

/**
 * Resolves path and token. With a configured token and no `token` query parameter, the last path
 * element is the token (`/live/abc.stream/SECRET`); without a configured token the path is kept.
 */
export function resolveTarget(path: string, query: Readonly<Record<string, string>>, configuredToken: string): StreamTarget {
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(query)) if (k !== 'token') params[k] = v;
  if ('token' in query) return { path, token: query.token, tokenFrom: 'query', params };
  if (!configuredToken) return { path, params };
  const cut = path.lastIndexOf('/');
  if (cut <= 0) return { path: '/', token: path.slice(1), tokenFrom: 'path', params };
  return { path: path.slice(0, cut), token: path.slice(cut + 1), tokenFrom: 'path', params };
}

/** The token rule of publish and play: a configured token must be given exactly. */
export function checkToken(target: StreamTarget, configuredToken: string): NameRefusal | undefined {
  if (!configuredToken) return undefined;
  if (target.token === undefined || target.token === '') return { kind: 'unauthorized', reason: 'no token given' };
  if (target.token === configuredToken) return undefined;
  // without `?token=` the last path element stood in for it: most likely the client gave none
  return target.tokenFrom === 'path'
    ? { kind: 'unauthorized', reason: 'no token given (no ?token=, and the last path element is not the token)' }
    : { kind: 'forbidden', reason: 'invalid token' };
}

/** Publishing is only allowed below `rtmp.app` (`/` allows every path); playing is not checked. */
export function checkApp(path: string, app: string): NameRefusal | undefined {
  if (app === '/' || app === '') return undefined;
  const base = app.endsWith('/') ? app.slice(0, -1) : app;
  if (path === base || path.startsWith(base + '/')) return undefined;
  return { kind: 'forbidden', reason: `the stream path must start with the app ${base}` };
}
