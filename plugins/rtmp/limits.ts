import { ipFamily } from '../../sdk/ip.ts';
import type { Logger } from 'pino';

/*
 * Connection caps of one RTMP service (both listeners together): in total and per remote
 * address. A connection beyond a cap is closed at accept, before any byte is read, so it costs
 * a file descriptor for a moment and nothing else.
 */

/** How often a refusal for one address is logged; the refusals in between are counted in the next line. */
const LOG_EVERY_MS = 10_000;
/** The service's own address: its supervised processes read and publish `{rtmp}` from here, past the per-address cap. */
const SELF: ReadonlySet<string> = new Set(['127.0.0.1', addressKey('::1')]);
/** Addresses whose refusals are being counted, at most (an attacker may rotate many). */
const MAX_LOG_KEYS = 1024;

/**
 * The key a per-address cap counts under: the IPv4 address (also when it arrives IPv4-mapped),
 * or the /64 of an IPv6 address, because one IPv6 host usually has a whole /64 to pick from.
 */
export function addressKey(ip: string): string {
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (v4) return v4[1]!;
  if (ipFamily(ip) !== 6) return ip;
  const [head = '', tail = ''] = ip.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => Number.parseInt(g || '0', 16).toString(16)).join(':')}::/64`;
}

export interface ConnectionCaps {
  /** Connections in total (`rtmp.max_connections`). */
  total: number;
  /** Connections per address (`rtmp.max_connections_per_address`). */
  perAddress: number;
}

export class ConnectionLimits {
  #caps: ConnectionCaps;
  #log: Logger;
  readonly #perKey = new Map<string, number>();
  readonly #refusals = new Map<string, { at: number; since: number }>();
  #total = 0;

  constructor(caps: ConnectionCaps, log: Logger) {
    this.#caps = caps;
    this.#log = log;
  }

  /** New caps and logger (a reload kept the listeners); connections already open stay. */
  rebind(caps: ConnectionCaps, log: Logger): void {
    this.#caps = caps;
    this.#log = log;
  }

  get open(): number {
    return this.#total;
  }

  /**
   * Counts a new connection from `ip`; returns a release function, or undefined when a cap is
   * reached (the refusal is logged, at most once per address every 10 s with a count).
   */
  admit(ip: string, remote: string): (() => void) | undefined {
    const key = addressKey(ip);
    const n = this.#perKey.get(key) ?? 0;
    let reason: string | undefined;
    if (this.#total >= this.#caps.total) reason = `${this.#total} connections open (rtmp.max_connections)`;
    // the service's own children ({rtmp} in a hundred processes) come from the loopback address
    else if (n >= this.#caps.perAddress && !SELF.has(key)) reason = `${n} connections open from ${key} (rtmp.max_connections_per_address)`;
    if (reason) {
      this.#refused(key, remote, reason);
      return undefined;
    }
    this.#perKey.set(key, n + 1);
    this.#total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#total--;
      const left = (this.#perKey.get(key) ?? 1) - 1;
      if (left > 0) this.#perKey.set(key, left);
      else this.#perKey.delete(key);
    };
  }

  #refused(key: string, remote: string, reason: string): void {
    const now = Date.now();
    const seen = this.#refusals.get(key);
    if (seen && now - seen.at < LOG_EVERY_MS) {
      seen.since++;
      return;
    }
    if (this.#refusals.size >= MAX_LOG_KEYS) {
      for (const [k, v] of this.#refusals) if (now - v.at >= LOG_EVERY_MS) this.#refusals.delete(k);
    }
    const more = seen?.since ?? 0;
    if (this.#refusals.size < MAX_LOG_KEYS || seen) this.#refusals.set(key, { at: now, since: 0 });
    this.#log.warn({ remote, ...(more ? { refused_since_last_line: more } : {}) }, `rtmp connection refused: ${reason}`);
  }
}
