import { randomBytes } from 'node:crypto';
import { isAbsolute, posix, relative, resolve } from 'node:path';
import { decodedRunPath, RUN_PATH_PATTERN, runPathsIn, type FilesystemService, type RunCredentials, type RunUse } from '../../sdk/index.ts';
import { runFields, type Resolution } from './command.ts';
import type { ProcessEntry } from './process-entry.ts';

/*
 * What a process's command names on the service's file mounts (the process's authority, issue 49):
 * the URL paths its placeholders point at the service with its run's token (memfs, S3, a vendor's
 * mount: what the door lets the token write) and the files under a local filesystem's folder it
 * names directly (`{diskfs}/x.mp4`, an output `data/x.mp4`: what the confinement lets it write).
 * An input's reads `GET`, an output's (and a global option's) writes `PUT`. Streams are the
 * listeners' (`RunCredentials.describe`).
 */

/** A filesystem with a local folder, as its mount shows it. */
export interface LocalMount { root: string; mount: string }

/** Where a path in a field ends: tee separators, option separators, quotes, queries. */
const END = /[|[\]:?#'"\s,;]/;
const SCHEME = /^[a-z][a-z0-9.+\-:]*:\/{1,3}/i;
const PLAYLIST = /\.(m3u8|mpd)$/i;
/** Input options that let a demuxer open what its playlist or list names by itself (`-safe 0`: the concat list's absolute paths). */
const WIDENING = new Set(['-protocol_whitelist', '-protocol_blacklist', '-safe']);

/** The mount path of `path` under `m`, or undefined when it lies outside its folder. */
function mountPath(m: LocalMount, path: string): string | undefined {
  const rel = relative(m.root, path);
  if (rel.startsWith('..') || isAbsolute(rel)) return undefined;
  return posix.join(m.mount, '/', rel.split('\\').join('/'));
}

/** ffmpeg's protocol prefixes without `//` (`file:`, `tee:`, `md5:`, `crypto:`, `concat:`, ...), nested ones too. */
const PREFIX = /^(?:[a-z][a-z0-9+.-]*:(?!\/\/))+/i;

/** The local files an address names (tee and concat parts without their `[options]`, protocol prefixes dropped; URLs and `-` none). */
function addressFiles(address: string): string[] {
  return address.split('|').flatMap((raw) => {
    const a = raw.replace(/^\[[^\]]*\]/, '').replace(PREFIX, '');
    return SCHEME.test(a) || a === '-' || a === '' ? [] : [resolve(a)];
  });
}

/** An absolute path in a field: at its start or after a separator (`=`, `|`, `]`, `:`, `,`, `;`, a quote, a space). */
const ABSOLUTE = /(?:^|[=|\]\s,;'":])(\/[^|[\]\\:?#'"\s,;]*)/g;
/** Paths that lead wherever a process is (its working directory, its root, its descriptors): named as such, never as a mount's. */
const ELSEWHERE = /^\/(?:proc|dev\/fd)(?:\/|$)/;

/**
 * Paths a field's text names anywhere, as the kernel would find them: every absolute path (`//`,
 * `/./`, `..` resolved; `/proc/self/cwd/...` and `/dev/fd/...` kept as they are, a use no mount's
 * policy names), and paths relative to the service's working directory, which the child shares
 * (`data/x` when the disk's folder is `./data`).
 */
function pathsNamed(text: string, roots: readonly string[]): string[] {
  const out: string[] = [];
  // (a path through /proc kept as written: its `..` is the kernel's, after the link)
  for (const m of text.matchAll(ABSOLUTE)) out.push(ELSEWHERE.test(m[1]!) ? m[1]! : resolve(m[1]!));
  for (const root of roots) {
    const rel = relative(process.cwd(), root);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) continue;
    for (const mark of [`${rel}/`, `./${rel}/`]) {
      for (let i = text.indexOf(mark); i >= 0; i = text.indexOf(mark, i + mark.length)) {
        // only where a path starts (`metadata/` is no `data/`)
        if (i > 0 && /[A-Za-z0-9._-]/.test(text[i - 1]!)) continue;
        const tail = text.slice(i);
        const end = tail.slice(mark.length).search(END);
        out.push(resolve(end < 0 ? tail : tail.slice(0, mark.length + end)));
      }
    }
  }
  return out;
}

function fullyDecoded(s: string): string {
  try { return decodeURIComponent(s); } catch { return s; }
}

/** Every file use of a resolved command; `token` is the run's its placeholders were resolved with. */
export function fileUses(r: Resolution, token: string, mounts: readonly LocalMount[]): RunUse[] {
  const seen = new Set<string>();
  const out: RunUse[] = [];
  const add = (resource: string | undefined, action: string) => {
    if (resource === undefined || seen.has(`${action} ${resource}`)) return;
    seen.add(`${action} ${resource}`);
    out.push({ type: 'fs', resource, action });
  };
  const field = (text: string, action: string, address: boolean) => {
    for (const p of runPathsIn(text, token)) {
      // as a file name (ffmpeg's `%04d` kept) and as fully decoded (`%2e%2e` is `..` to a server): both must be allowed
      for (const path of [posix.normalize(decodedRunPath(p)), posix.normalize(fullyDecoded(p))]) {
        add(path, action);
        // what the run's credential reaches beside it: a playlist's or pattern's folder to read
        // (its segments), the files its muxer writes next to a playlist (runMayRead, run-writes.ts)
        if (PLAYLIST.test(path) || (action === 'GET' && RUN_PATH_PATTERN.test(path))) add(`${posix.dirname(path).replace(/\/$/, '')}/${action === 'GET' ? '**' : '*'}`, action);
      }
    }
    const files = [...pathsNamed(text, mounts.map((m) => m.root)), ...(address ? addressFiles(text) : [])];
    for (const f of files) {
      // a path that leads wherever the process is: no policy of a mount names it
      if (ELSEWHERE.test(f)) add(f, action);
      else for (const m of mounts) add(mountPath(m, f), action);
    }
  };
  // what makes ffmpeg open any file a playlist or list names (`file:` segments, absolute paths): every file, read
  const widened = (opts: readonly string[]) => opts.some((o, i) => WIDENING.has(o) && (o !== '-safe' || opts[i + 1] === '0'));
  if ([r.options, ...r.inputs.map((i) => i.options)].some(widened)) add('/**', 'GET');
  for (const o of r.options) field(o, 'PUT', false);
  for (const i of r.inputs) {
    for (const o of i.options) field(o, 'GET', false);
    field(i.address, 'GET', true);
  }
  for (const o of r.outputs) {
    for (const x of o.options) field(x, 'PUT', false);
    field(o.address, 'PUT', true);
  }
  return out;
}

/** What an authority check needs of the service: its run registry, its filesystems and the verdict on one use. */
export interface AuthorityOptions {
  runs: RunCredentials | undefined;
  filesystems: readonly FilesystemService[];
  may: (use: RunUse) => boolean;
}

/**
 * Why the caller may not make the process of entry `e` (its command names a use `may` refuses),
 * or undefined. Resolved with a token of its own that no listener knows (nothing is granted by
 * it), read as the listeners read a run's command.
 */
export function authorityRefusal(e: Pick<ProcessEntry, 'id' | 'resolveFor'>, o: AuthorityOptions): string | undefined {
  const token = randomBytes(24).toString('base64url');
  const r = e.resolveFor({ processId: e.id, token });
  // an invalid definition is refused for that by the caller
  if (typeof r === 'string') return undefined;
  return runAuthorityRefusal(r, e.id, token, o);
}

/** Why a run of process `id` resolved as `r` with `token` names what `may` refuses, or undefined (at each start: its maker's policies now). */
export function runAuthorityRefusal(r: Resolution, id: string, token: string, o: AuthorityOptions): string | undefined {
  const mounts = o.filesystems.flatMap((fs) => (fs.root ? [{ root: resolve(fs.root), mount: fs.mount }] : []));
  const uses = [...fileUses(r, token, mounts), ...(o.runs?.uses({ processId: id, token, fields: runFields(r) }) ?? [])];
  const no = uses.find((u) => !o.may(u));
  return no && `the process may not ${no.action} ${no.type} ${no.resource.slice(0, 200)} (no policy of its maker allows it)`;
}
