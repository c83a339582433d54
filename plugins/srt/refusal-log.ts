/** What the SRT code logs through: pino's Logger, or the host process's line to the service. */
export interface SrtLog {
  debug(fields: object, msg: string): void;
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
  error(fields: object, msg: string): void;
}

/** How often refusals of one address for one reason are logged; those in between are counted. */
export const LOG_EVERY_MS = 10_000;
/** Address and reason pairs whose refusals are being counted, at most (an attacker may rotate many). */
const MAX_KEYS = 1024;

interface Seen { at: number; suppressed: number }

/**
 * Log lines for refusals that a stranger can cause at any rate: the first of each address and
 * reason is written at once, the next ones at most every `LOG_EVERY_MS` with the number left out
 * in between (`suppressed`), so a flood of handshakes neither fills the log nor loses the fact.
 */
export class RefusalLog {
  readonly #log: SrtLog;
  readonly #seen = new Map<string, Seen>();
  readonly #everyMs: number;

  constructor(log: SrtLog, everyMs = LOG_EVERY_MS) {
    this.#log = log;
    this.#everyMs = everyMs;
  }

  /** Logs `fields` with `msg` unless the same address and reason were logged within the interval. */
  warn(address: string, reason: string, fields: Record<string, unknown>, msg: string, now = Date.now()): void {
    const key = `${address} ${reason}`;
    const seen = this.#seen.get(key);
    if (seen && now - seen.at < this.#everyMs) {
      seen.suppressed++;
      return;
    }
    const suppressed = seen?.suppressed ?? 0;
    this.#seen.delete(key);
    if (this.#seen.size >= MAX_KEYS) this.#prune(now);
    this.#seen.set(key, { at: now, suppressed: 0 });
    this.#log.warn(suppressed > 0 ? { ...fields, suppressed } : fields, msg);
  }

  #prune(now: number): void {
    for (const [key, seen] of this.#seen) {
      if (this.#seen.size < MAX_KEYS / 2) return;
      if (now - seen.at >= this.#everyMs || this.#seen.size >= MAX_KEYS) this.#seen.delete(key);
    }
  }
}

/** `1.2.3.4:5678` or `[::1]:5678` → the address without the port. */
export function hostOf(peer: string): string {
  const cut = peer.lastIndexOf(':');
  return (cut < 0 ? peer : peer.slice(0, cut)).replace(/^\[|\]$/g, '');
}
