/**
 * Typed hook refs over tapable. A hook owner declares its hooks once with
 * `createHooksRef`; the kernel instantiates them per app and freezes the set.
 * `pre*` hooks may veto or transform (bail / waterfall); `on*` hooks only notify.
 */
export {
  SyncHook,
  SyncBailHook,
  SyncWaterfallHook,
  AsyncSeriesHook,
  AsyncSeriesBailHook,
  AsyncSeriesWaterfallHook,
  AsyncParallelHook,
} from 'tapable';

/** A named set of tapable hooks, as `createHooksRef` builds it. */
export type HookSet = Record<string, object>;

/** A reference to a frozen set of hooks owned by one module. */
export interface HooksRef<H extends HookSet> {
  readonly id: string;
  /** Builds a fresh set for one app. Called once per app by the kernel. */
  readonly create: () => H;
}

/**
 * Declares a set of hooks.
 *
 * @example
 * export const streamHooksRef = createHooksRef('vendor.stream', () => ({
 *   onPublish: new AsyncParallelHook<[string]>(['name']),
 * }));
 */
export function createHooksRef<H extends HookSet>(id: string, create: () => H): HooksRef<H> {
  return Object.freeze({ id, create });
}

/** The callback type a hook accepts (promise-returning for async hooks). */
export type TapFn<X> = X extends { tapPromise: (opts: never, fn: infer F) => void }
  ? F
  : X extends { tap: (opts: never, fn: infer F) => void }
    ? F
    : never;

/** What a plugin sees as `ctx.hooks`. */
export interface PluginHooks {
  /**
   * The app's instance of a hook set, e.g. to call the hooks you own.
   *
   * @example
   * const hooks = ctx.hooks.get(streamHooksRef);
   * await hooks.onPublish.promise('live');
   */
  get<H extends HookSet>(ref: HooksRef<H>): Readonly<H>;
  /**
   * Taps one hook, named after the plugin. Async hooks are tapped with `tapPromise`. `opts.stage`:
   * lower runs earlier (default 0), e.g. a gate that refuses before other taps count a request.
   *
   * @example
   * ctx.hooks.tap(processHooksRef, 'onStateChange', async (ev) => { ctx.log.info(ev, 'state'); });
   */
  tap<H extends HookSet, K extends keyof H & string>(ref: HooksRef<H>, hook: K, fn: TapFn<H[K]>, opts?: { stage?: number }): void;
}
