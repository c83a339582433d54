import { createContainer, asValue, type AwilixContainer } from 'awilix/browser';
import type { AnyServiceRef, ServiceRef } from '../../sdk/index.ts';

/** A stand-in for a service, provided before the plugins (see BuildOptions.overrides). */
export interface ServiceOverride {
  ref: AnyServiceRef;
  impl: unknown;
}

/**
 * The app's service registry on awilix. Never exported to plugins: they get resolved values.
 * Multi-provider refs collect every provided value in an array.
 */
export class ServiceContainer {
  readonly #c: AwilixContainer = createContainer({ strict: true });
  readonly #multi = new Map<string, unknown[]>();
  readonly #overridden = new Set<string>();

  /** Provides a stand-in that wins: later provides of a single-provider ref are ignored. */
  override(ref: AnyServiceRef, impl: unknown): void {
    this.provide(ref as ServiceRef<unknown, boolean>, impl);
    if (!ref.multiple) this.#overridden.add(ref.id);
  }

  overridden(id: string): boolean {
    return this.#overridden.has(id);
  }

  provide<T>(ref: ServiceRef<T, boolean>, impl: T): void {
    if (!ref.multiple && this.#overridden.has(ref.id)) return;
    if (ref.multiple) {
      this.#list(ref.id).push(impl);
      return;
    }
    if (this.#c.hasRegistration(ref.id)) throw new Error(`service '${ref.id}' is already provided`);
    this.#c.register(ref.id, asValue(impl));
  }

  /** The live list of a multi ref: consumers resolved early still see later providers. */
  #list(id: string): unknown[] {
    let list = this.#multi.get(id);
    if (!list) {
      list = [];
      this.#multi.set(id, list);
      this.#c.register(id, asValue(list));
    }
    return list;
  }

  has(id: string): boolean {
    return this.#c.hasRegistration(id);
  }

  resolve(ref: AnyServiceRef): unknown {
    if (ref.multiple) return this.#list(ref.id);
    if (!this.#c.hasRegistration(ref.id)) return undefined;
    return this.#c.resolve(ref.id);
  }

  /** Ids of single-provider services provided so far. */
  ids(): Set<string> {
    return new Set(Object.keys(this.#c.registrations).filter((id) => !this.#multi.has(id)));
  }

  async dispose(): Promise<void> {
    await this.#c.dispose();
  }
}
