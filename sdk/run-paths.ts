import { posix } from 'node:path';
import { perRun, type RunGrant } from './run-credentials.ts';

/*
 * The file paths a run's command names at the service's file mounts (issue 43.4): the URL paths
 * after `<token>@<host:port>` its placeholders wrote. The file door's write scope reads them
 * (`core/door/run-writes.ts`), the process check asks its maker's policies for them
 * (`core/process/run-uses.ts`), and an access plugin lets a run read only what they name.
 */

/** Where a URL path ends inside a field: tee separators, option separators, escapes, queries. */
const END = /[|[\]\\:?#'"\s,;]/;

/**
 * ffmpeg's name patterns and DASH templates, as a `split` separator (odd parts are patterns). The
 * width cannot start with 0 (a flag): `[-+ #0]*\d*` split a run of zeros every way (25 s on 128 K).
 *
 * @example
 * '/x/seg_%04d.ts'.split(RUN_PATH_PATTERN); // ['/x/seg_', '%04d', '.ts']
 */
export const RUN_PATH_PATTERN = /(%%|%[-+ #0]*(?:[1-9]\d*)?(?:\.\d+)?[a-zA-Z]|\$[A-Za-z]+(?:%0?\d*d)?\$|\$\$)/;

function decode(s: string): string {
  try { return decodeURIComponent(s); } catch { return s; }
}

/**
 * A URL path as it names a file: percent escapes decoded, ffmpeg's name patterns (`%03d`) kept.
 *
 * @example
 * decodedRunPath('/memfs/a%20b/seg_%03d.ts'); // '/memfs/a b/seg_%03d.ts'
 */
export function decodedRunPath(path: string): string {
  return path.split(RUN_PATH_PATTERN).map((part, i) => (i % 2 === 0 ? decode(part) : part)).join('');
}

/**
 * Every URL path a field names after `<token>@<host>` (as written: escapes and patterns kept).
 *
 * @example
 * runPathsIn(`http://process:p:${token}@127.0.0.1:8080/memfs/x.m3u8`, token); // ['/memfs/x.m3u8']
 */
export function runPathsIn(text: string, token: string): string[] {
  const out: string[] = [];
  const mark = `${token}@`;
  for (let i = text.indexOf(mark); i >= 0; i = text.indexOf(mark, i + mark.length)) {
    const rest = text.slice(i + mark.length);
    const slash = rest.search(/[/|\s]/);
    if (slash < 0 || rest[slash] !== '/') continue;
    const tail = rest.slice(slash);
    const end = tail.search(END);
    out.push(end < 0 ? tail : tail.slice(0, end));
  }
  return out;
}

interface ReadScope { exact: Set<string>; folders: string[] }

const readScope = perRun((grant: RunGrant): ReadScope => {
  const exact = new Set<string>();
  const folders: string[] = [];
  for (const f of grant.fields) {
    for (const raw of runPathsIn(f.text, grant.token)) {
      for (const p of new Set([posix.normalize(decodedRunPath(raw)), posix.normalize(decode(raw))])) {
        // a playlist's segments (named relative to it) and a pattern's files lie in its folder
        if (/\.(m3u8|mpd)$/i.test(p) || RUN_PATH_PATTERN.test(p)) folders.push(posix.dirname(p).replace(/\/?$/, '/'));
        else exact.add(p);
      }
    }
  }
  return { exact, folders };
});

/**
 * Whether a live run may read `path` (a mount path: `/memfs/live/x.ts`, cleaned) with its
 * credential: a path its command names (any section: an output's playlist is read back by
 * `append_list`), or anything below the folder of a playlist, manifest or name pattern it names
 * (their segments). A playlist naming `../other/x.ts` leads out of it: refused.
 *
 * @example
 * if (grant && !runMayRead(grant, path)) refuse(401);
 */
export function runMayRead(grant: RunGrant, path: string): boolean {
  const s = readScope(grant);
  if (s.exact.has(path)) return true;
  for (const f of s.folders) if (path.startsWith(f)) return true;
  return false;
}
