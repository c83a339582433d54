import type { HookSet, HooksRef, PluginHooks, TapFn } from '../../sdk/hooks.ts';

/** One frozen instance of each hook set per app. */
export class HookRegistry {
  readonly #sets = new Map<string, HookSet>();

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
      tap: (ref, hook, fn) => {
        const h = this.get(ref)[hook] as unknown as {
          call?: unknown; tapPromise: (o: string, f: unknown) => void; tap: (o: string, f: unknown) => void;
        };
        // tapable's async hooks have no `call`; sync hooks refuse tapPromise
        if (typeof h.call === 'function') h.tap(name, fn);
        else h.tapPromise(name, fn as TapFn<unknown>);
      },
    };
  }
}
