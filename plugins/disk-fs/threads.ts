import {
  fsServeHooksRef, replayServed, threadServeMode,
  type PluginContext, type DepsMap, type ServedReport, type ServingThreads, type ThreadServeMode,
} from '../../sdk/index.ts';
import type { DiskCacheOptions } from './cache.ts';
import type { DiskRoot } from './root.ts';

/** What the disk thread module gets as `init`: the same root, CORS, types and cache rules as main. */
export interface DiskThreadInit {
  dir: string;
  real: string;
  reserved: readonly string[];
  corsOrigins: string[];
  /** `storage.mimetypes_file` (each thread reads it: the same table as main). */
  mimetypesFile: string;
  cache: DiskCacheOptions | undefined;
}

/** What the threads answer, sent again whenever it may change (a new thread gets it as its snapshot). */
export interface DiskThreadState {
  mode: ThreadServeMode;
  /** First path segments of other routes (ServingThreads.routeHeads). */
  heads: readonly string[];
}

/**
 * Registers the disk thread module (only with `http.threads` > 0). Until the app listens the
 * threads answer nothing from the disk (`none`): the other plugins' routes and file-hook taps
 * are known only then.
 */
export function diskThreads(ctx: Pick<PluginContext<unknown, DepsMap>, 'hooks' | 'onListen' | 'onClose'>, threads: ServingThreads, root: DiskRoot, init: Omit<DiskThreadInit, 'dir' | 'real' | 'reserved'>): void {
  const hooks = ctx.hooks.get(fsServeHooksRef);
  let listening = false;
  const state = (): DiskThreadState => ({ mode: listening ? threadServeMode(hooks) : 'none', heads: threads.routeHeads() });
  const channel = threads.register({
    name: 'disk-fs',
    url: new URL('./thread.ts', import.meta.url).href,
    init: { ...init, dir: root.dir, real: root.real, reserved: root.reserved } satisfies DiskThreadInit,
    snapshot: state,
  });
  channel.onMessage((batch) => replayServed(hooks, '/', batch as ServedReport[]));
  ctx.onListen(() => {
    listening = true;
    channel.broadcast(state());
  });
  ctx.onClose(() => channel.close());
}
