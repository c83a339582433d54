import type { HookSet, HooksRef, PluginHooks, TapFn } from '../../sdk/hooks.ts';

/** One frozen instance of each hook set per app. */
export class HookRegistry {
  readonly #sets = new Map<string, HookSet>();
  readonly #onTap = new Set<(refId: string) => void>();

  /** Calls `fn` after every tap made through `forTapper` (the file door tells its threads when main's read taps change). */
  onTap(fn: (refId: string) => void): () => void {
    this.#onTap.add(fn);
    return () => this.#onTap.delete(fn);
  }

  get<H extends HookSet>(ref: HooksRef<H>): Readonly<H> {
    let set = this.#sets.get(ref.id);
    if (!set) {
      set = Object.freeze(ref.create());
      this.#sets.set(ref.id, set);
    }
    return set as H;
  }

  /** The `ctx.hooks` facade for one tapper, whose name goes on every tap. */
  forTapper(name: string): PluginHooks {
    return {
      get: (ref) => this.get(ref),
      tap: (ref, hook, fn, opts) => {
        const h = this.get(ref)[hook] as unknown as {
          call?: unknown; tapPromise: (o: unknown, f: unknown) => void; tap: (o: unknown, f: unknown) => void;
        };
        const o = opts?.stage === undefined ? name : { name, stage: opts.stage };
        // tapable's async hooks have no `call`; sync hooks refuse tapPromise
        if (typeof h.call === 'function') h.tap(o, fn);
        else h.tapPromise(o, fn as TapFn<unknown>);
        for (const l of this.#onTap) l(ref.id);
      },
    };
  }
}
