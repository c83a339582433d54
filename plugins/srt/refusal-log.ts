/** What the SRT code logs through: pino's Logger, or the host process's line to the service. */
export interface SrtLog {
  debug(fields: object, msg: string): void;
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
  error(fields: object, msg: string): void;
}

/** The window over which one address's refusal lines are counted. */
export const LOG_EVERY_MS = 10_000;
/** Refusal lines of one address per window; beyond, its refusals are counted, not written. */
export const LINES_PER_WINDOW = 20;
/** Addresses whose refusals are being counted, at most (an attacker may rotate many). */
const MAX_KEYS = 1024;

interface Seen { start: number; lines: number; suppressed: number }

/**
 * Log lines for refusals, which a stranger can cause at any rate. Every refusal is written, with
 * its protocol, stream, peer and reason (issue 44.3: a client that retries within seconds sees
 * each of its refusals in the log, stream name included), up to `LINES_PER_WINDOW` per address
 * every `LOG_EVERY_MS`; a flood beyond that from one address is counted and the count goes into
 * that address's next line (`suppressed`), so it neither fills the log nor loses the fact.
 */
export class RefusalLog {
  readonly #log: SrtLog;
  readonly #seen = new Map<string, Seen>();
  readonly #everyMs: number;
  readonly #lines: number;

  constructor(log: SrtLog, everyMs = LOG_EVERY_MS, lines = LINES_PER_WINDOW) {
    this.#log = log;
    this.#everyMs = everyMs;
    this.#lines = lines;
  }

  /** Logs `fields` with `msg` (and `protocol: 'srt'`) unless `address` used up its lines of this window. */
  warn(address: string, fields: Record<string, unknown>, msg: string, now = Date.now()): void {
    let seen = this.#seen.get(address);
    let carried = 0;
    if (!seen || now - seen.start >= this.#everyMs) {
      carried = seen?.suppressed ?? 0;
      this.#seen.delete(address);
      if (this.#seen.size >= MAX_KEYS) this.#prune(now);
      seen = { start: now, lines: 0, suppressed: 0 };
      this.#seen.set(address, seen);
    }
    if (seen.lines >= this.#lines) {
      seen.suppressed++;
      return;
    }
    seen.lines++;
    const line = { protocol: 'srt', ...fields };
    this.#log.warn(carried > 0 ? { ...line, suppressed: carried } : line, msg);
  }

  #prune(now: number): void {
    for (const [key, seen] of this.#seen) {
      if (this.#seen.size < MAX_KEYS / 2) return;
      if (now - seen.start >= this.#everyMs || this.#seen.size >= MAX_KEYS) this.#seen.delete(key);
    }
  }
}

/** `1.2.3.4:5678` or `[::1]:5678` → the address without the port. */
export function hostOf(peer: string): string {
  const cut = peer.lastIndexOf(':');
  return (cut < 0 ? peer : peer.slice(0, cut)).replace(/^\[|\]$/g, '');
}
