import type { FsServeHooks } from '../../sdk/fs-hooks.ts';
import type { FileDoorTaps } from '../../sdk/file-door.ts';

/*
 * Taps of door modules on a copy's file hooks, marked, so that main can tell them from the
 * in-process taps (`ctx.hooks.tap`) a serving thread cannot run.
 */

const IN_EVERY_DOOR = Symbol.for('core.files.in-every-door');

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

const inProcess = (taps: ReadonlyArray<{ fn: unknown }>) => taps.some((t) => !(t.fn as Record<symbol, unknown>)[IN_EVERY_DOOR]);

/**
 * True while main has in-process taps that see reads (`ctx.hooks.tap` on `preServe`,
 * `transformPlaylist` or `onServed`): a thread cannot run them, so it leaves every read to main.
 */
export function mainReads(hooks: FsServeHooks): boolean {
  return inProcess(hooks.preServe.taps) || inProcess(hooks.transformPlaylist.taps) || inProcess(hooks.onServed.taps);
}
