import { posix } from 'node:path';
import type { FilesystemService } from '../../../sdk/index.ts';
import { streamName } from '../../../sdk/streams.ts';
import type { IOConfig } from '../config-model.ts';

/*
 * What an on-demand process produces, read from its resolved outputs: HLS playlists (and their
 * segments) on a public mount, and names of the stream table it publishes. A request or a read
 * of one of them is a demand for the process.
 */

/** One HLS output on a public mount. */
export interface HlsTarget {
  fs: FilesystemService;
  /** The mount as the file door names it (`/memfs`, `/` for the disk). */
  mount: string;
  /** The playlist's path in the filesystem (`/cam1.m3u8`). */
  playlist: string;
  /** Its folder (`/`, `/live`). */
  dir: string;
  /** Matches the file names (not paths) of its segments in `dir`. */
  segments: RegExp;
}

export interface DemandTargets {
  hls: HlsTarget[];
  /** Stream table names it publishes (`{rtmp,name=X}` -> `X`, an SRT streamid's resource). */
  streams: string[];
}

const SCHEME = /^[a-z][a-z0-9.+-]*:/i;

/** The parts of a tee address without their `[options]`. */
function parts(address: string): string[] {
  const tee = address.includes('|') || address.startsWith('[');
  return tee ? address.split('|').map((p) => p.replace(/^\[[^\]]*\]/, '')) : [address];
}

/** A URL path decoded, except ffmpeg's number patterns (`%04d` is no escape). */
function unescapePath(p: string): string {
  return p.replace(/%[0-9A-Fa-f]{2}/g, (m, off: number) => (/^%0?\d*d/.test(p.slice(off)) ? m : decodeURIComponent(m)));
}

/** Where `address` lands on a public mount: the filesystem and the path inside it. */
function onMount(address: string, fss: readonly FilesystemService[]): { fs: FilesystemService; path: string } | undefined {
  const a = address.startsWith('file:') ? address.slice(5) : address;
  if (/^https?:/i.test(a)) {
    let path: string;
    try { path = unescapePath(new URL(a).pathname); } catch { return undefined; }
    // the longest mount wins, as in the door (`/` is the catch-all)
    const hit = fss.filter((f) => f.publicMount && (f.mount === '/' || path === f.mount || path.startsWith(`${f.mount}/`)))
      .sort((x, y) => y.mount.length - x.mount.length)[0];
    return hit && { fs: hit, path: hit.mount === '/' ? path : path.slice(hit.mount.length) };
  }
  if (SCHEME.test(a) || !a.startsWith('/')) return undefined;
  const clean = posix.normalize(a);
  const hit = fss.find((f) => f.publicMount && f.root && clean.startsWith(`${f.root.replace(/\/+$/, '')}/`));
  return hit && { fs: hit, path: clean.slice(hit.root!.replace(/\/+$/, '').length) };
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A segment file name pattern (`cam1_%03d.ts`, ffmpeg's `%d` forms) as a regular expression. */
function segmentRegex(name: string): RegExp {
  const src = name.split(/(%0?\d*d|%%)/).map((p) => (/^%0?\d*d$/.test(p) ? '\\d+' : p === '%%' ? '%' : escape(p))).join('');
  return new RegExp(`^${src}$`);
}

function optionValue(options: readonly string[], name: string): string | undefined {
  const i = options.lastIndexOf(name);
  return i >= 0 ? options[i + 1] : undefined;
}

function hlsOf(io: IOConfig, fss: readonly FilesystemService[]): HlsTarget[] {
  const out: HlsTarget[] = [];
  for (const part of parts(io.address)) {
    const at = onMount(part, fss);
    if (!at || !at.path.endsWith('.m3u8')) continue;
    const dir = posix.dirname(at.path);
    const given = optionValue(io.options, '-hls_segment_filename');
    const seg = given === undefined ? undefined : onMount(given, fss) ?? { fs: at.fs, path: posix.resolve(dir, given) };
    const segments = seg && seg.fs === at.fs && posix.dirname(seg.path) === dir
      ? segmentRegex(posix.basename(seg.path))
      : new RegExp(`^${escape(posix.basename(at.path, '.m3u8'))}\\d+\\.(ts|m4s)$`);
    out.push({ fs: at.fs, mount: at.fs.mount === '/' ? '/' : at.fs.mount, playlist: at.path, dir, segments });
  }
  return out;
}

/** The stream table name an RTMP or SRT output publishes to, if any. */
export function streamOf(address: string): string | undefined {
  let u: URL;
  try { u = new URL(address); } catch { return undefined; }
  const scheme = u.protocol.toLowerCase();
  if (scheme === 'rtmp:' || scheme === 'rtmps:') return streamName(decodeURIComponent(u.pathname)) || undefined;
  if (scheme !== 'srt:') return undefined;
  const id = address.match(/[?&]streamid=([^&]*)/)?.[1];
  if (!id) return undefined;
  const v = decodeURIComponent(id);
  // `#!::r=name,m=publish` (the SRT access control syntax) or `name,mode:publish` (the placeholder's)
  const r = v.startsWith('#!::') ? v.slice(4).split(',').find((kv) => kv.startsWith('r='))?.slice(2) : v.split(',')[0];
  return r ? streamName(r) : undefined;
}

/** Everything the resolved outputs produce that a reader may ask for. */
export function demandTargets(outputs: readonly IOConfig[], fss: readonly FilesystemService[]): DemandTargets {
  const hls: HlsTarget[] = [];
  const streams: string[] = [];
  for (const io of outputs) {
    hls.push(...hlsOf(io, fss));
    for (const part of parts(io.address)) {
      const name = streamOf(part);
      if (name) streams.push(name);
    }
  }
  return { hls, streams };
}
