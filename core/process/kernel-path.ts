import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { isAbsolute, join, sep } from 'node:path';

/*
 * Where the kernel would write a path, not where it looks to be: a lexical check passes
 * `/dev/fd/../root/tmp/x.ts` and a symlink in the disk folder, the kernel follows both.
 */

/** The kernel's view of `path` (relative to `cwd`): symlinks and '..' resolved component by component. */
export function kernelPath(path: string, cwd = process.cwd()): string {
  const abs = isAbsolute(path) ? path : `${cwd}/${path}`;
  return resolveRaw(abs.replace(/\/+$/, '') || '/', 0);
}

function resolveRaw(p: string, links: number): string {
  try {
    // libc realpath walks component by component as the kernel does ('..' after a link goes up
    // from its target); Node's JS realpath would clean '..' lexically first
    return realpathSync.native(p);
  } catch {
    // not there yet (or a dangling link): resolved below from the longest existing prefix
  }
  const cut = p.lastIndexOf('/');
  if (cut < 0) return p;
  const parent = cut === 0 ? '/' : resolveRaw(p.slice(0, cut), links);
  const name = p.slice(cut + 1);
  if (name === '' || name === '.') return parent;
  if (name === '..') return parent === '/' ? '/' : parent.slice(0, parent.lastIndexOf('/')) || '/';
  const here = join(parent, name);
  // a dangling symlink: opening it for writing creates its target
  if (links < 40 && isLink(here)) {
    const target = readlinkSync(here);
    return resolveRaw(isAbsolute(target) ? target : `${parent}/${target}`, links + 1);
  }
  return here;
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** True when `path` is `root` or below it (both already kernel paths). */
export function inside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** Device paths an output may name outside the root (reference 8.4 keeps `/dev/` outputs; only harmless ones stay). */
export const HARMLESS_DEVICES = new Set(['/dev/null', '/dev/zero', '/dev/stdout', '/dev/stderr', '/dev/fd/1', '/dev/fd/2']);

/**
 * ffmpeg's protocol of an address (libavformat url_find_protocol): the leading run of
 * [A-Za-z0-9+.-] before a ':' (or `subfile,`); no protocol means a plain file.
 */
export function protocolOf(address: string): { name: string; rest: string } | undefined {
  const m = /^([A-Za-z0-9+.-]+)(,[^:]*)?:/.exec(address);
  if (!m) return undefined;
  if (m[2] !== undefined && m[1] !== 'subfile') return undefined;
  return { name: m[1]!.toLowerCase(), rest: address.slice(m[0].length) };
}

/** Network protocols: no file is touched; the access lists decide. */
export const NETWORK = new Set([
  'amqp', 'dtls', 'ffrtmpcrypt', 'ffrtmphttp', 'ftp', 'gopher', 'gophers', 'hls', 'http', 'httpproxy', 'https',
  'icecast', 'ipfs', 'ipns', 'librist', 'mms', 'mmsh', 'mmst', 'prompeg', 'rist', 'rtmp', 'rtmpe', 'rtmps',
  'rtmpt', 'rtmpte', 'rtmpts', 'rtp', 'rtsp', 'rtsps', 'sctp', 'sftp', 'srt', 'srtp', 'tcp', 'tls', 'udp',
  'udplite', 'whip', 'zmq',
]);
