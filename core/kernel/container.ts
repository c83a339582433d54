import { createContainer, asValue, type AwilixContainer } from 'awilix';
import type { AnyServiceRef, ServiceRef } from '../../sdk/index.ts';

/**
 * The app's service registry on awilix. Never exported to plugins: they get resolved values.
 * Multi-provider refs collect every provided value in an array.
 */
export class ServiceContainer {
  readonly #c: AwilixContainer = createContainer({ strict: true });
  readonly #multi = new Map<string, unknown[]>();

  provide<T>(ref: ServiceRef<T, boolean>, impl: T): void {
    if (ref.multiple) {
      let list = this.#multi.get(ref.id);
      if (!list) {
        list = [];
        this.#multi.set(ref.id, list);
        this.#c.register(ref.id, asValue(list));
      }
      list.push(impl);
      return;
    }
    if (this.#c.hasRegistration(ref.id)) throw new Error(`service '${ref.id}' is already provided`);
    this.#c.register(ref.id, asValue(impl));
  }

  has(id: string): boolean {
    return this.#c.hasRegistration(id);
  }

  resolve(ref: AnyServiceRef): unknown {
    if (!this.#c.hasRegistration(ref.id)) return ref.multiple ? [] : undefined;
    return this.#c.resolve(ref.id);
  }

  /** Ids provided so far. */
  ids(): Set<string> {
    return new Set(Object.keys(this.#c.registrations));
  }

  async dispose(): Promise<void> {
    await this.#c.dispose();
  }
}
