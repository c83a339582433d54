import { closeSync, fstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';

/*
 * What a local item file leads ffmpeg to. A media file is read alone, but some formats name other
 * files that ffmpeg's demuxer then opens: an HLS playlist (its segments, variant playlists, keys
 * and init sections), an ffconcat script, a DASH or IMF manifest. ffmpeg picks the demuxer by the
 * content (the first MiB, its `formatprobesize`), whatever the file's name, so the content decides
 * here too. An HLS playlist is accepted when every name in it, followed down its variants, is a
 * file of the disk root; the other referencing formats are refused. Synchronous: the relay picks
 * its next item synchronously, and it is checked again there, just before ffmpeg opens it.
 */

/** ffmpeg's format probe reads at most this much (`formatprobesize`, 1 MiB by default). */
const PROBE_BYTES = 1 << 20;
/** What is read of a file a playlist names: enough to tell another playlist (extension_picky guards the rest). */
const ENTRY_HEAD_BYTES = 4096;
/** Largest playlist read whole. */
const MAX_PLAYLIST_BYTES = 4 << 20;
/** Playlists inside playlists (a master, its variants), and names checked per item. */
const MAX_DEPTH = 3;
const MAX_NAMES = 20_000;

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;
const URI_ATTR = /URI="([^"]*)"/g;

type Kind = 'hls' | 'concat' | 'dash' | 'imf' | 'media';

/**
 * What ffmpeg's probe would take the file for. Its probe skips an ID3v2 tag before asking the
 * demuxers (an HLS playlist behind a 30-byte tag led ffmpeg out of the root), so the start is
 * looked for anywhere in the probed bytes: a media file holding `#EXTM3U` is then checked as a
 * playlist (and refused unless its names are files of the root), which errs on the safe side.
 */
function kindOf(head: Buffer): Kind {
  const text = head.toString('latin1');
  if (text.includes('#EXTM3U')) return 'hls';
  if (text.includes('ffconcat version')) return 'concat';
  if (/<MPD/i.test(text)) return 'dash';
  if (text.includes('<CompositionPlaylist')) return 'imf';
  return 'media';
}

/** The first `n` bytes of a regular file (fewer when it is shorter); undefined for anything else. */
function readHead(path: string, n: number): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const st = fstatSync(fd);
    if (!st.isFile()) return undefined;
    const buf = Buffer.alloc(Math.min(n, st.size));
    const got = buf.length ? readSync(fd, buf, 0, buf.length, 0) : 0;
    return buf.subarray(0, got);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** The names an HLS playlist makes ffmpeg open: URI lines and `URI="..."` attributes of tags. */
function playlistNames(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    if (!line.startsWith('#')) out.push(line);
    else for (const m of line.matchAll(URI_ATTR)) if (m[1]) out.push(m[1]);
  }
  return out;
}

interface Walk { root: string; names: number; may?: ((diskPath: string) => boolean) | undefined }

/**
 * Why a local file (its real path, inside the real disk root `root`) cannot be an item, or
 * undefined. Never says anything about a file outside the root: a name leading out is refused
 * before it is looked at. `may`: whether the playlist's maker may read a file a playlist names
 * (its disk path, `/bob/x.ts`; an access plugin's policies).
 */
export function localFileProblem(root: string, real: string, may?: (diskPath: string) => boolean): string | undefined {
  return fileProblem({ root, names: 0, may }, real, 0, PROBE_BYTES);
}

function fileProblem(w: Walk, real: string, depth: number, headBytes: number): string | undefined {
  const head = readHead(real, headBytes);
  if (!head) return 'cannot be read';
  switch (kindOf(head)) {
    case 'media': return undefined;
    case 'concat': return 'an ffconcat script names other files: not accepted as an item (list the files as items)';
    case 'dash': return 'a DASH manifest names other files: not accepted as a disk item';
    case 'imf': return 'an IMF composition names other files: not accepted as a disk item';
    case 'hls': return hlsProblem(w, real, depth);
  }
}

function hlsProblem(w: Walk, real: string, depth: number): string | undefined {
  if (depth >= MAX_DEPTH) return `playlists nested deeper than ${MAX_DEPTH}`;
  const text = readHead(real, MAX_PLAYLIST_BYTES + 1);
  if (!text) return 'cannot be read';
  if (text.length > MAX_PLAYLIST_BYTES) return `a playlist over ${MAX_PLAYLIST_BYTES >> 20} MiB`;
  // from its first `#EXTM3U`: ffmpeg skips a tag in front (every name after it is checked, a superset)
  const all = text.toString('utf8');
  const body = all.slice(Math.max(0, all.indexOf('#EXTM3U')));
  // ffmpeg reads a live playlist again while it plays: what it would read then is not the checked one
  if (!body.includes('#EXT-X-ENDLIST') && !body.includes('#EXT-X-STREAM-INF')) {
    return 'a live playlist (no #EXT-X-ENDLIST) is read again while it plays: only finished playlists are items';
  }
  for (const name of playlistNames(body)) {
    if (++w.names > MAX_NAMES) return `more than ${MAX_NAMES} names in its playlists`;
    const why = nameProblem(w, real, name, depth);
    if (why) return `${name}: ${why}`;
  }
  return undefined;
}

/** One name of a playlist at `real`: a file of the disk root (relative, or absolute inside it), itself checked. */
function nameProblem(w: Walk, real: string, name: string, depth: number): string | undefined {
  if (SCHEME.test(name)) return 'a playlist on the disk may only name files of the disk filesystem (no URL, no file:)';
  // ffmpeg resolves a name against the playlist's own path (the real one: that is what it opens)
  const path = resolve(dirname(real), name);
  if (!inside(w.root, path)) return 'outside the disk filesystem';
  let target: string;
  try {
    target = realpathSync(path);
  } catch {
    return 'no such file in the disk filesystem';
  }
  if (!inside(w.root, target)) return 'outside the disk filesystem';
  if (w.may && !w.may(`/${relative(w.root, target)}`)) return 'its maker may not read it (no fs GET policy)';
  return fileProblem(w, target, depth + 1, ENTRY_HEAD_BYTES);
}
