/*
 * What strangers may start (issue 43): on-demand starts have a budget per client address within a
 * window and a total at once. Decided on main only (the engine's hub asks before a demand starts a
 * waiting process), so the budget holds however many serving threads answer the requests; the
 * copies of the door tap learn who is over it (`BudgetMessage`) to answer 429 instead of the
 * waiting playlist. No imports: door-tap.ts, loaded in every thread, takes `clientKey` from here.
 */

export interface BudgetLimits {
  /** `encoder.ondemand.max_starts_per_client` (0 = no limit). */
  maxStartsPerClient: number;
  /** `encoder.ondemand.client_window_seconds`. */
  windowSeconds: number;
  /** `encoder.ondemand.max_running` (0 = no limit). */
  maxRunning: number;
  /** Seconds a refusal over the total asks to wait (`Retry-After`): the engine's idle time. */
  fullRetrySeconds: number;
}

/** Why a start is refused, and when to ask again (seconds, for `Retry-After`). */
export interface BudgetRefusal {
  why: 'client' | 'total';
  retryAfter: number;
}

/** From the hub to every copy of the door tap: what a request that would start a process meets now. */
export interface BudgetMessage {
  t: 'budget';
  /** Ids of the on-demand processes that wait (a request of theirs would start them). */
  waiting: string[];
  /** Seconds to wait when the total is reached, else 0. */
  full: number;
  /** Client keys at their budget, and until when (epoch ms). */
  blocked: Array<[key: string, until: number]>;
  /** Seconds to wait while the machine is over the service's resource budget (`resources.*`), else 0. */
  resources?: number;
}

/** The refusals' texts (the Error body; 429 Too Many Requests). */
export const CLIENT_OVER = 'Too many on-demand processes started from this address; retry later';
export const TOTAL_OVER = 'Too many on-demand processes run at once; retry later';
export const RESOURCES_OVER = 'The machine is over the resource budget of the service; retry later';

/** `Retry-After` of a refusal over the resource budget (the machine is sampled every second). */
export const RESOURCES_RETRY_SECONDS = 5;

/** Clients remembered at most (their starts within the window); beyond it the expired ones go first. */
const MAX_CLIENTS = 100_000;

/**
 * The budget's key of a client address (`ip`, `ip:port`, `[v6]:port`): IPv4 as it is (an IPv4-mapped
 * IPv6 address as its IPv4), IPv6 by its /64, as `http.max_connections_per_address` counts.
 */
export function clientKey(remote: string): string {
  let a = remote;
  if (a.startsWith('[')) a = a.slice(1, a.indexOf(']') > 0 ? a.indexOf(']') : undefined);
  else if (/^[\d.]+:\d+$/.test(a)) a = a.slice(0, a.lastIndexOf(':'));
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  if (mapped) return mapped[1]!;
  if (!a.includes(':')) return a;
  const pct = a.indexOf('%');
  if (pct >= 0) a = a.slice(0, pct);
  const [head = '', tail] = a.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/** The budget, on main. `now` in epoch ms (the door tap compares `until` with its own clock). */
export class DemandBudget {
  readonly #l: BudgetLimits;
  readonly #now: () => number;
  /** Start times (ms, oldest first) by client key, within the window. */
  readonly #starts = new Map<string, number[]>();

  constructor(limits: BudgetLimits, now: () => number = Date.now) {
    this.#l = limits;
    this.#now = now;
  }

  /**
   * Why a start asked by `remote` would be refused now with `running` processes started by demand,
   * or undefined. `remote` undefined: a reader inside the service (a relay to another node), which
   * only the total bounds.
   */
  check(remote: string | undefined, running: number): BudgetRefusal | undefined {
    if (this.#l.maxRunning > 0 && running >= this.#l.maxRunning) return { why: 'total', retryAfter: this.#l.fullRetrySeconds };
    if (remote === undefined || this.#l.maxStartsPerClient <= 0) return undefined;
    const until = this.#until(clientKey(remote));
    return until === undefined ? undefined : { why: 'client', retryAfter: Math.max(1, Math.ceil((until - this.#now()) / 1000)) };
  }

  /** A start asked by `remote` happened: it counts against its client for the window. */
  charge(remote: string | undefined): void {
    if (remote === undefined || this.#l.maxStartsPerClient <= 0) return;
    const key = clientKey(remote);
    const list = this.#live(key) ?? [];
    list.push(this.#now());
    if (!this.#starts.has(key) && this.#starts.size >= MAX_CLIENTS) this.#sweep();
    this.#starts.set(key, list);
  }

  /** What the door taps need to answer refusals (`waiting`: the waiting processes' ids). */
  message(waiting: string[], running: number): BudgetMessage {
    const full = this.#l.maxRunning > 0 && running >= this.#l.maxRunning ? this.#l.fullRetrySeconds : 0;
    const blocked: Array<[string, number]> = [];
    if (this.#l.maxStartsPerClient > 0) {
      for (const key of [...this.#starts.keys()]) {
        const until = this.#until(key);
        if (until !== undefined) blocked.push([key, until]);
      }
    }
    return { t: 'budget', waiting, full, blocked };
  }

  /** When a client at its budget may start again (epoch ms), or undefined when it may now. */
  #until(key: string): number | undefined {
    const list = this.#live(key);
    if (!list || list.length < this.#l.maxStartsPerClient) return undefined;
    return list[list.length - this.#l.maxStartsPerClient]! + this.#l.windowSeconds * 1000;
  }

  /** A client's starts still within the window (the map forgets a client without any). */
  #live(key: string): number[] | undefined {
    const list = this.#starts.get(key);
    if (!list) return undefined;
    const from = this.#now() - this.#l.windowSeconds * 1000;
    let i = 0;
    while (i < list.length && list[i]! <= from) i++;
    if (i > 0) list.splice(0, i);
    if (list.length > 0) return list;
    this.#starts.delete(key);
    return undefined;
  }

  #sweep(): void {
    for (const key of [...this.#starts.keys()]) this.#live(key);
    // still full of clients within the window: the oldest entries go (their starts are forgotten)
    for (const key of this.#starts.keys()) {
      if (this.#starts.size < MAX_CLIENTS) break;
      this.#starts.delete(key);
    }
  }
}
