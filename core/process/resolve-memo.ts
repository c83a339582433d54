import type { PlaceholderDefinition, PlaceholderRegistry, PlaceholderRun, PlaceholderSection } from '../../sdk/index.ts';
import { resolveProcess, type Resolution } from './command.ts';
import type { FullConfig } from './config-model.ts';
import { explainUnresolved } from './unresolved.ts';
import type { Validator } from './validate.ts';

/** Everything one resolution read from outside its config: what it depends on. */
interface Reads {
  /** Each placeholder name looked up and the definition found (or none). */
  gets: [string, PlaceholderDefinition | undefined][];
  /** Each value a definition gave for a section (views have no run). */
  values: [PlaceholderDefinition, PlaceholderSection, string][];
  /** Each process an input referenced and the config found (or none). */
  lookups: [string, FullConfig | undefined][];
}

export type ViewResolver = (c: FullConfig, registry: PlaceholderRegistry, lookup: (id: string) => FullConfig | undefined) => Resolution | string;

/**
 * The command a process that does not run shows (a view: no run, so no credential) is resolved
 * when the process is restored and again once the service listens (a `{memfs}` of `address: ":0"`
 * knows its port only then). With 1,000 stored processes the second pass doubled the start-up's
 * resolving for the first process list (issue 46.4). A resolution depends on its config (this
 * memo is keyed by that object, which a change replaces), the checks of the engine (fixed for its
 * life) and what it read: the placeholder definitions it looked up, the values they gave, the
 * configs of the processes it referenced. This keeps those reads with the last valid result and
 * gives the result again while every read gives the same answer; anything else resolves afresh.
 */
export class ResolveMemo {
  readonly #last = new WeakMap<FullConfig, { reads: Reads; result: Resolution }>();
  readonly #registry: PlaceholderRegistry;
  readonly #lookup: (id: string) => FullConfig | undefined;
  readonly #resolve: ViewResolver;

  constructor(registry: PlaceholderRegistry, lookup: (id: string) => FullConfig | undefined, resolve: ViewResolver) {
    this.#registry = registry;
    this.#lookup = lookup;
    this.#resolve = resolve;
  }

  /** The view's resolution of `c`: the last one while nothing it read changed. */
  view(c: FullConfig): Resolution | string {
    const last = this.#last.get(c);
    if (last && this.#unchanged(last.reads)) return last.result;
    const reads: Reads = { gets: [], values: [], lookups: [] };
    const r = this.#resolve(c, this.#recording(reads), (id) => {
      const found = this.#lookup(id);
      reads.lookups.push([id, found]);
      return found;
    });
    if (typeof r === 'string') this.#last.delete(c);
    else this.#last.set(c, { reads, result: r });
    return r;
  }

  #unchanged(reads: Reads): boolean {
    for (const [name, def] of reads.gets) if (this.#registry.get(name) !== def) return false;
    for (const [def, section, value] of reads.values) if (def.value(section) !== value) return false;
    for (const [id, found] of reads.lookups) if (this.#lookup(id) !== found) return false;
    return true;
  }

  /** The registry as the resolution sees it, noting each lookup and each value given. */
  #recording(reads: Reads): PlaceholderRegistry {
    const inner = this.#registry;
    return {
      register: (def) => inner.register(def),
      list: () => inner.list(),
      get: (name) => {
        const def = inner.get(name);
        reads.gets.push([name, def]);
        if (!def) return undefined;
        // a view has no run: the value without a credential
        const value = (section: PlaceholderSection) => {
          const v = def.value(section);
          reads.values.push([def, section, v]);
          return v;
        };
        return new Proxy(def, { get: (target, prop) => (prop === 'value' ? value : Reflect.get(target, prop, target)) });
      },
    };
  }
}

/**
 * The engine's resolve (entry-env.ts): a child's run resolves afresh (the run's credential goes
 * into its placeholders), a view goes through the memo; an invalid definition says why.
 */
export function engineResolver(registry: PlaceholderRegistry, validator: Validator, lookup: (id: string) => FullConfig | undefined) {
  const shown = new ResolveMemo(registry, lookup, (c, reads, look) => resolveProcess(c, { registry: reads, validator, lookup: look }));
  return (c: FullConfig, run?: PlaceholderRun): Resolution | string => {
    const r = run ? resolveProcess(c, { registry, validator, lookup, run }) : shown.view(c);
    return typeof r === 'string' ? explainUnresolved(c, registry, r) : r;
  };
}
