import { isAbsolute, join, resolve } from 'node:path';
import { beneath } from './paths.ts';

/*
 * What a confined child may reach, as path rules for Landlock (confine.c). Landlock only grants, so
 * "read everything but the service's secrets" is spelled as grants: every entry of `/` is readable
 * except the ones on the way to a secret, and those folders are opened up one level further, entry
 * by entry, until only the secrets are left out. A symlink is never granted itself (what it points
 * to is judged by its own place), so a link beside a secret cannot lead into it. Entries created
 * later in a folder on the way to a secret are not readable: the safe side.
 */

export interface ConfinePlan {
  /** Absolute, symlink-free paths the child must not read at all (files or folders). */
  hidden: readonly string[];
  /** Absolute paths the child may write beneath (folders) or to (files). */
  writable: readonly string[];
}

export interface DirEntryKind {
  name: string;
  kind: 'dir' | 'link' | 'other';
}

/** Lists a folder; undefined when it cannot be listed (gone, not a folder). */
export type Lister = (dir: string) => readonly DirEntryKind[] | undefined;

export interface PathRules {
  /** Read (and execute) beneath each. */
  ro: string[];
  /** Read and write beneath each (no execute). */
  rw: string[];
  /** Devices: read, write and ioctl. */
  dev: string[];
  /** Folders whose names may be listed, nothing more (`/dev`: ffmpeg lists capture devices). */
  ls: string[];
  /** Read, never executed (a user's folders to read of the disk root). */
  rd?: string[];
  /** Written, not read (a user's folders it may write but not read); noexec as `rw`. */
  wo?: string[];
}

/** Devices a media program uses: the harmless ones, capture (V4L2, ALSA), GPUs and frame buffers. */
export const DEVICE_NAMES = /^(null|zero|full|random|urandom|video\d+|media\d+|v4l-subdev\d+|v4l|snd|dri|nvidia[a-z0-9-]*|fb\d+|dma_heap|vchiq|vcsm-cma|rpivid-[a-z0-9-]+)$/;

/**
 * The rules for one child. `/dev` is always left out of the reads: its devices come by name
 * (DEVICE_NAMES), as reading a disk device would bypass every other rule.
 */
export function pathRules(plan: ConfinePlan, list: Lister): PathRules {
  const hidden = new Set<string>(['/dev', ...plan.hidden.filter((p) => isAbsolute(p) && p !== '/').map((p) => resolve(p))]);
  const ro: string[] = [];
  const walk = (dir: string) => {
    for (const e of list(dir) ?? []) {
      const p = join(dir, e.name);
      if (hidden.has(p) || e.kind === 'link') continue;
      let onTheWay = false;
      for (const h of hidden) if (beneath(p, h)) { onTheWay = true; break; }
      if (!onTheWay) ro.push(p);
      else if (e.kind === 'dir') walk(p);
    }
  };
  walk('/');
  const dev = (list('/dev') ?? []).filter((e) => DEVICE_NAMES.test(e.name)).map((e) => `/dev/${e.name}`);
  return { ro, rw: plan.writable.map((p) => resolve(p)), dev, ls: ['/dev'] };
}

/** The wrapper's arguments for these rules (before `--`). */
export function ruleArgs(r: PathRules): string[] {
  const out: string[] = [];
  for (const p of r.ro) out.push('--ro', p);
  for (const p of r.ls) out.push('--ls', p);
  for (const p of r.dev) out.push('--dev', p);
  for (const p of r.rw) out.push('--rw', p);
  for (const p of r.rd ?? []) out.push('--rd', p);
  for (const p of r.wo ?? []) out.push('--wo', p);
  return out;
}

/**
 * `parent` granted with a hole: every entry beneath it except `hole` and the folders on the way
 * to it, one level at a time (links left out, as in `pathRules`; an entry made later on the way
 * is not granted: the safe side). For an operator's writable folder that holds the disk root
 * of a child narrowed to some of it.
 */
export function around(parent: string, hole: string, list: Lister): string[] {
  const out: string[] = [];
  let dir = parent;
  while (dir !== hole && beneath(dir, hole)) {
    const next = join(dir, hole.slice(dir === '/' ? 1 : dir.length + 1).split('/')[0]!);
    for (const e of list(dir) ?? []) {
      const p = join(dir, e.name);
      if (p !== next && e.kind !== 'link') out.push(p);
    }
    dir = next;
  }
  return out;
}
