import { realpathSync } from 'node:fs';
import { join, sep } from 'node:path';
import { cleanFsPath, isApiError } from '../../../sdk/index.ts';
import { localFileProblem } from './local-file.ts';

/** URL items: read by ffmpeg as they are. */
const URL_ITEM = /^(https?|rtmps?|srt):\/\//i;

/** The protocols ffmpeg may use for a local item: files (and AES keys over them), nothing of the network. */
export const LOCAL_PROTOCOLS = ['-protocol_whitelist', 'file,crypto'];

/** Where an item's source is read from: a URL, or an absolute file inside the disk root. */
export type Resolved = { ok: true; input: string; url: boolean } | { ok: false; reason: string };

/** The rules every item meets: the disk root, and the process inputs' rule (`processesRef.inputProblem`). */
export interface SourceRules {
  /** `storage.disk.dir`. */
  diskDir: string;
  /** Why an address is refused as a source (`encoder.access.input`), or undefined. */
  inputProblem(address: string): string | undefined;
}

/**
 * Resolves an item: an http(s)/rtmp(s)/srt URL as is; anything else is a disk-fs path (relative
 * to `storage.disk.dir`), cleaned with the disk-fs rules (no `..`, no NUL, no backslash) and
 * resolved with its symlinks, which must stay inside the root. Either must then pass the access
 * lists of process inputs (a file as its absolute path), and a file must not lead ffmpeg out of
 * the root (`local-file.ts`: an HLS playlist's names, other referencing formats refused).
 * Synchronous: it runs at every item start, once per item.
 */
export function resolveSource(rules: SourceRules, source: string, may?: (diskPath: string) => boolean): Resolved {
  const r = locate(rules.diskDir, source);
  if (!r.ok) return r;
  const denied = rules.inputProblem(r.input);
  if (denied) return { ok: false, reason: `${source}: ${denied}` };
  if (r.url) return r;
  const why = localFileProblem(r.root, r.input, may);
  return why ? { ok: false, reason: `${source}: ${why}` } : { ok: true, input: r.input, url: false };
}

type Located = { ok: true; input: string; url: true } | { ok: true; input: string; url: false; root: string } | { ok: false; reason: string };

function locate(diskDir: string, source: string): Located {
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
    return { ok: true, input: real, url: false, root };
  } catch {
    return { ok: false, reason: `${source}: no such file in the disk filesystem` };
  }
}
