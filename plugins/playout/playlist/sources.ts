import { realpathSync } from 'node:fs';
import { join, sep } from 'node:path';
import { cleanFsPath, isApiError } from '../../../sdk/index.ts';

/** URL items: read by ffmpeg as they are. */
const URL_ITEM = /^(https?|rtmps?|srt):\/\//i;

/** Where an item's source is read from: a URL, or an absolute file inside the disk root. */
export type Resolved = { ok: true; input: string; url: boolean } | { ok: false; reason: string };

/**
 * Resolves an item: an http(s)/rtmp(s)/srt URL as is; anything else is a disk-fs path (relative
 * to `storage.disk.dir`), cleaned with the disk-fs rules (no `..`, no NUL, no backslash) and
 * resolved with its symlinks, which must stay inside the root. Synchronous: it runs at every item
 * start, once per item.
 */
export function resolveSource(diskDir: string, source: string): Resolved {
  if (URL_ITEM.test(source)) return { ok: true, input: source, url: true };
  if (/^[a-z][a-z0-9+.-]*:/i.test(source)) return { ok: false, reason: `${source}: only http(s), rtmp(s) and srt URLs or disk paths` };
  let clean: string;
  try {
    clean = cleanFsPath(source.startsWith('/') ? source : `/${source}`, false);
  } catch (err) {
    return { ok: false, reason: `${source}: ${isApiError(err) ? err.details[0] ?? 'bad path' : 'bad path'}` };
  }
  try {
    const root = realpathSync(diskDir);
    const real = realpathSync(join(root, clean));
    if (real !== root && !real.startsWith(root + sep)) return { ok: false, reason: `${source}: outside the disk filesystem` };
    return { ok: true, input: real, url: false };
  } catch {
    return { ok: false, reason: `${source}: no such file in the disk filesystem` };
  }
}
