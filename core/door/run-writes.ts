import {
  ApiError, linearRegex, parseBasicAuthorization, RUN_PATH_PATTERN, runPathsIn, type LinearRegex, type RunCredentials, type RunGrant,
} from '../../sdk/index.ts';
import { parseRunBasic } from '../../sdk/run-credentials.ts';

/*
 * Writes by a run's credential (issue 43.4): a child the engine started writes to a public mount
 * with `process:<id>:<token>` (its placeholders put it in the URL), and may write only what its
 * resolved command names there: every URL path after `<token>@<host:port>` in its fields, ffmpeg's
 * name patterns (`%d`, `%04d`, `%v`, strftime, DASH's `$Number$`) matching any text within one
 * path segment, and next to a playlist (`.m3u8`) or manifest (`.mpd`) the files its muxer writes
 * there: `<stem>` followed by `.`, `_` or `-` (temp files, variants, segments), `<stem><n>.ts`
 * (default segment names), DASH's default `init-stream*` / `chunk-stream*`, and the names given
 * by `-master_pl_name`, `-hls_fmp4_init_filename`, `-init_seg_name` and `-media_seg_name`.
 * DELETE (HLS `delete_segments`) follows the same scope. Only the outputs' and the global options'
 * fields count: an input's paths are read (an input's `-method PUT -post_data` overwrote them).
 */

const NAMED = new Set(['-master_pl_name', '-hls_fmp4_init_filename', '-init_seg_name', '-media_seg_name']);

const quote = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function decode(s: string): string {
  try { return decodeURIComponent(s); } catch { return s; }
}

/** A path with ffmpeg's patterns as a regular expression source (a pattern matches within one segment). */
function patternSource(path: string): string {
  return path.split(RUN_PATH_PATTERN).map((part, i) => {
    if (i % 2 === 0) return quote(decode(part));
    if (part === '%%') return '%';
    if (part === '$$') return '\\$';
    return '[^/]*';
  }).join('');
}

// one scope per bound command (a run's fields never change after its spawn)
const scopes = new WeakMap<object, LinearRegex[]>();

/** The regular expressions of the URL paths a run may write (and delete). */
export function runWriteScope(grant: RunGrant): LinearRegex[] {
  let scope = scopes.get(grant.fields);
  if (!scope) scopes.set(grant.fields, scope = buildScope(grant));
  return scope;
}

function buildScope(grant: RunGrant): LinearRegex[] {
  const named: string[] = [];
  const paths: string[] = [];
  grant.fields.forEach((f, i) => {
    // what an input names is read, never written: `-method PUT` on an input overwrote another's playlist
    if (f.section === 'input') return;
    const prev = grant.fields[i - 1];
    if (prev && NAMED.has(prev.text) && !f.text.includes('/')) named.push(f.text);
    paths.push(...runPathsIn(f.text, grant.token));
  });
  const sources = new Set<string>();
  for (const p of paths) {
    sources.add(patternSource(p));
    const m = /^(.*\/)([^/]*)\.(m3u8|mpd)$/.exec(p);
    if (!m) continue;
    const dir = patternSource(m[1]!);
    const stem = patternSource(m[2]!);
    sources.add(`${dir}${stem}(?:[._-][^/]*|\\d+\\.(?:ts|m4s|mp4|vtt|aac))`);
    if (m[3] === 'mpd') sources.add(`${dir}(?:init|chunk)-stream[^/]*`);
    for (const n of named) sources.add(dir + patternSource(n));
  }
  // linear: the path of a write meets them (several `[^/]*` backtracked 3 s on a 60 K path)
  return [...sources].flatMap((s) => linearRegex(`^${s}$`) ?? []);
}

/**
 * The verdict on a public write whose Basic credential is a run's: `'ok'` when its live run may
 * write `urlPath` (the mount's prefix and the path), a 403 ApiError when it may not, undefined
 * when the credential is no live run's (the mount's own check decides then).
 */
export function runWriteVerdict(runs: RunCredentials | undefined, authorization: string | undefined, urlPath: string): 'ok' | ApiError | undefined {
  if (!runs || authorization === undefined) return undefined;
  const grant = grantOf(runs, authorization);
  if (!grant) return undefined;
  if (runWriteScope(grant).some((re) => re.test(urlPath))) return 'ok';
  return new ApiError(403, 'Forbidden', [`the credential of process ${grant.processId} does not name ${urlPath.slice(0, 256)}`], 'FS_RUN_SCOPE');
}

/** The grants of the `Authorization` values seen (null: no live run's), per table, until a run is bound or revoked. */
const seen = new WeakMap<RunCredentials, Map<string, RunGrant | null>>();
/** Values kept at most (all forgotten beyond): a child sends its one value with every upload. */
const SEEN_MAX = 1024;

/**
 * The live bound run an `Authorization` value names (a child sends the same one with every upload:
 * its Basic decoding and token digest once, not per upload). A bound run's grant and a value that
 * names no live run are kept until the table says a run was bound or revoked; an unbound run's
 * grant is not kept (its revoke is not told).
 */
function grantOf(runs: RunCredentials, authorization: string): RunGrant | undefined {
  let known = seen.get(runs);
  if (!known) {
    const fresh = new Map<string, RunGrant | null>();
    seen.set(runs, known = fresh);
    runs.watch(() => fresh.clear());
  }
  const hit = known.get(authorization);
  if (hit !== undefined) return hit ?? undefined;
  const given = parseBasicAuthorization(authorization);
  const cred = typeof given === 'string' ? undefined : parseRunBasic(given);
  const found = cred && runs.find(cred.token);
  const grant = found && found.processId === cred.processId ? found : undefined;
  if (grant && grant.fields.length === 0) return grant;
  if (known.size >= SEEN_MAX) known.clear();
  known.set(authorization, grant ?? null);
  return grant;
}
