import type { Logger } from 'pino';

type Fn<A extends unknown[] = []> = (...args: A) => unknown;
interface Tap<A extends unknown[] = []> { owner: string; fn: Fn<A> }

/**
 * The lifecycle phases after mounting (design section 2): `ready` in mount order (a failure
 * stops the boot), `listen` with the port in mount order (failures logged), then at stop
 * `shutdown` in reverse order before any `close` (reverse order), each stop step once.
 */
export class Lifecycle {
  readonly #log: Logger;
  readonly #ready: Tap[] = [];
  readonly #listen: Tap<[number]>[] = [];
  readonly #shutdown: Tap[] = [];
  readonly #close: Tap[] = [];
  #stopping: Promise<void> | undefined;

  constructor(log: Logger) {
    this.#log = log;
  }

  onReady(owner: string, fn: Fn): void { this.#ready.push({ owner, fn }); }
  onListen(owner: string, fn: Fn<[number]>): void { this.#listen.push({ owner, fn }); }
  onShutdown(owner: string, fn: Fn): void { this.#shutdown.push({ owner, fn }); }
  onClose(owner: string, fn: Fn): void { this.#close.push({ owner, fn }); }

  /** Every plugin is mounted. Throws the first failure, naming its plugin. */
  async ready(): Promise<void> {
    for (const t of this.#ready) {
      try {
        await t.fn();
      } catch (err) {
        throw new Error(`Plugin '${t.owner}' ready failed: ${(err as Error).message}`, { cause: err });
      }
    }
  }

  async listen(port: number): Promise<void> {
    for (const t of this.#listen) {
      try { await t.fn(port); } catch (err) { this.#log.error({ err, plugin: t.owner }, 'onListen failed'); }
    }
  }

  /** `onShutdown` taps, then `onClose` taps, both newest first; a second call waits for the first. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      for (const t of [...this.#shutdown.reverse(), ...this.#close.reverse()]) {
        try { await t.fn(); } catch (err) { this.#log.error({ err, plugin: t.owner }, 'close failed'); }
      }
    })();
    return this.#stopping;
  }
}
