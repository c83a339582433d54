import type { FsServeHooks } from '../../../sdk/fs-hooks.ts';
import type { FileDoorTaps } from '../../../sdk/file-door.ts';
import type { ThreadMode, WireServed } from './wire.ts';

/*
 * Taps of door modules on a copy's file hooks, marked, so that main can tell them from the
 * in-process taps (`ctx.hooks.tap`) a serving thread cannot run.
 */

const IN_EVERY_DOOR = Symbol.for('core.files.in-every-door');
const PLAYLISTS_ONLY = Symbol.for('core.fs-serve.playlists-only');

/** Puts a module copy's taps on `hooks`. */
export function tapInto(hooks: FsServeHooks, name: string, taps: FileDoorTaps): void {
  const opts = { name: `door:${name}` };
  const mark = <F extends object>(fn: F): F => Object.assign(fn, { [IN_EVERY_DOOR]: true });
  if (taps.preServe) hooks.preServe.tap(opts, mark(taps.preServe.bind(taps)));
  if (taps.transformPlaylist) hooks.transformPlaylist.tap(opts, mark(taps.transformPlaylist.bind(taps)));
  if (taps.onServed) hooks.onServed.tap(opts, mark(taps.onServed.bind(taps)));
  if (taps.onWritten) hooks.onWritten.tap(opts, mark(taps.onWritten.bind(taps)));
}

/** Drops the taps a module put on `hooks` (its channel closed). */
export function untap(hooks: FsServeHooks, name: string): void {
  const tag = `door:${name}`;
  for (const h of [hooks.preServe, hooks.transformPlaylist, hooks.onServed, hooks.onWritten]) {
    const taps = h.taps as Array<{ name: string }>;
    for (let i = taps.length - 1; i >= 0; i--) if (taps[i]!.name === tag) taps.splice(i, 1);
  }
}

const inProcess = (taps: ReadonlyArray<{ fn: unknown }>) => taps.filter((t) => !(t.fn as Record<symbol, unknown>)[IN_EVERY_DOOR]);

/**
 * Which reads a thread may answer with main's in-process taps: `all` (none that sees reads),
 * `segments` (every in-process `preServe` looks at playlists only: a thread answers the rest and
 * reports it to `onServed`), `none`.
 */
export function threadMode(hooks: FsServeHooks): ThreadMode {
  const pre = inProcess(hooks.preServe.taps);
  if (pre.length === 0 && inProcess(hooks.transformPlaylist.taps).length === 0 && inProcess(hooks.onServed.taps).length === 0) return 'all';
  return pre.every((t) => (t.fn as Record<symbol, unknown>)[PLAYLISTS_ONLY] === true) ? 'segments' : 'none';
}

/** A read a thread answered, through main's in-process `onServed` taps only (the thread ran its module taps). */
export function servedInProcess(hooks: FsServeHooks, r: WireServed): void {
  const taps = inProcess(hooks.onServed.taps);
  if (taps.length === 0) return;
  const event = {
    request: { mount: r.mount, path: r.path, query: r.query, remote: r.remote, headers: r.headers, method: r.method },
    status: r.status,
    bytes: r.bytes,
  };
  for (const t of taps) (t.fn as (e: typeof event) => void)(event);
}
