import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { KeepOptions } from '../../sdk/index.ts';

/** A port a kept resource holds, with the config key of its address (`KeepOptions.holds`). */
export type KeptPort = NonNullable<ReturnType<NonNullable<KeepOptions<unknown>['holds']>>>[number];

interface Entry {
  owner: string;
  settings: unknown;
  value: unknown;
  close: (value: unknown) => Promise<void>;
  holds?: (value: unknown) => readonly KeptPort[];
  /** Claimed by the running (or the building) app; unclaimed ones are parked by a reload. */
  claimed: boolean;
}

/**
 * The resources plugins (and the core: the stream table) keep across reloads of one service
 * (`ctx.keep`): listeners, host processes and their connections, held while the settings they
 * were opened with stay the same. The service owns one registry for its whole life:
 *
 * - an app's close during a reload (`parking`) leaves each kept resource open, unclaimed;
 * - the next app's `keep` claims it when its settings are deep-equal (the same object, not
 *   opened again), or closes it and opens a new one (a moved listener: its port is free first);
 * - `settle()` after the reload closes what no app claimed (a plugin turned off);
 * - at any other close (SIGTERM, `service.close`, a test's app) each resource is closed at its
 *   owner's `onClose` point, as if it had registered an `onClose` itself, so the end hooks
 *   of its sessions fire into plugins that still run.
 */
export class KeptResources {
  readonly #entries = new Map<string, Entry>();
  #parking = false;

  /** A reload starts: app closes from now on park their kept resources. */
  park(): void {
    this.#parking = true;
  }

  /** The reload is done (or failed and rolled back): what no app claimed is closed. */
  async settle(log?: Logger): Promise<void> {
    this.#parking = false;
    await this.#closeUnclaimed(log);
  }

  /**
   * Before the next app is built: a parked resource holding a port that the next config gives to a
   * listener of another key is closed (its settings may be unchanged: RTMP on port 0 kept the port
   * the API now moves onto).
   */
  async displace(wanted: readonly KeptPort[], log?: Logger): Promise<void> {
    for (const [key, e] of [...this.#entries]) {
      if (e.claimed || !e.holds) continue;
      const held = e.holds(e.value);
      const taken = held.some((h) => h.port !== 0 && wanted.some((w) => w.key !== h.key && w.proto === h.proto && w.port === h.port));
      if (!taken) continue;
      this.#entries.delete(key);
      log?.info({ kept: key }, 'a kept listener gives its port to another listener of the new config');
      try {
        await e.close(e.value);
      } catch (err) {
        log?.error({ err, kept: key }, 'closing a kept resource failed');
      }
    }
  }

  /** Keys kept now (claimed or parked), for tests and logs. */
  keys(): string[] {
    return [...this.#entries.keys()];
  }

  /**
   * `owner`'s resource under `o.key`: the kept one when its settings are unchanged, else a new
   * one. `onClose` registers the app-close step of the owner (the lifecycle's `onClose`).
   */
  async keep<T>(owner: string, o: KeepOptions<T>, onClose: (fn: () => Promise<void>) => void, log?: Logger): Promise<T> {
    const full = `${owner}:${o.key}`;
    const had = this.#entries.get(full);
    if (had?.claimed) throw new Error(`ctx.keep: '${o.key}' is kept twice by '${owner}'`);
    let entry: Entry;
    if (had && isDeepStrictEqual(had.settings, o.settings)) {
      had.claimed = true;
      entry = had;
      log?.info({ kept: o.key }, 'kept across the reload');
    } else {
      if (had) {
        this.#entries.delete(full);
        await had.close(had.value);
      }
      const value = await this.#open(o, log);
      entry = {
        owner, settings: structuredClone(o.settings), value, close: o.close as (v: unknown) => Promise<void>,
        holds: o.holds as ((v: unknown) => readonly KeptPort[]) | undefined, claimed: true,
      };
      this.#entries.set(full, entry);
    }
    onClose(async () => {
      if (this.#parking) {
        entry.claimed = false;
        return;
      }
      if (this.#entries.get(full) === entry) this.#entries.delete(full);
      await entry.close(entry.value);
    });
    return entry.value as T;
  }

  /**
   * Opens; when that fails while parked resources are left (one of them may hold the port the new
   * one wants: a plugin turned off whose port another listener now takes), those are closed and
   * the open is tried once more.
   */
  async #open<T>(o: KeepOptions<T>, log?: Logger): Promise<T> {
    try {
      return await o.open();
    } catch (err) {
      if (![...this.#entries.values()].some((e) => !e.claimed)) throw err;
      await this.#closeUnclaimed(log);
      return o.open();
    }
  }

  async #closeUnclaimed(log?: Logger): Promise<void> {
    for (const [key, e] of [...this.#entries].reverse()) {
      if (e.claimed) continue;
      this.#entries.delete(key);
      try {
        await e.close(e.value);
      } catch (err) {
        log?.error({ err, kept: key }, 'closing a kept resource failed');
      }
    }
  }

  /** Closes everything still kept (the service stops after a failed rollback). */
  async closeAll(log?: Logger): Promise<void> {
    this.#parking = false;
    for (const e of this.#entries.values()) e.claimed = false;
    await this.#closeUnclaimed(log);
  }
}
