import { performance } from 'node:perf_hooks';
import type { MachineUsage } from './machine.ts';

/*
 * The service's resource budget (`resources.max_cpu_usage`, `resources.max_memory_usage`: percent
 * of the whole machine, 0 = no limit, as the reference's successor has them). A start fits when
 * the machine's usage plus what the process may use by its own `limits` (`cpu_usage` in percent of
 * the machine, `memory_mbytes`) stays within both limits, as the successor's `Request(cpu, memory)`.
 */

export interface ResourceLimits {
  /** Percent of all cores, 0 = no limit. */
  maxCpu: number;
  /** Percent of the total memory, 0 = no limit. */
  maxMemory: number;
}

/** What a process asks for: its own `limits` (0 = none). */
export interface StartRequest {
  /** Percent of the whole machine (`limits.cpu_usage`). */
  cpu: number;
  /** Bytes (`limits.memory_mbytes`). */
  memoryBytes: number;
}

const NOTHING: StartRequest = { cpu: 0, memoryBytes: 0 };

const pct = (n: number) => `${n.toFixed(n > 0 && n < 0.1 ? 3 : 1)} %`;

export class ResourceBudget {
  readonly #l: ResourceLimits;
  readonly #usage: MachineUsage;
  readonly #pollMs: number;
  readonly #listeners = new Set<() => void>();
  readonly #waiters = new Map<() => void, () => void>();
  #timer: NodeJS.Timeout | undefined;
  #over = false;

  constructor(limits: ResourceLimits, usage: MachineUsage, pollMs = 1000) {
    this.#l = limits;
    this.#usage = usage;
    this.#pollMs = pollMs;
  }

  /** Whether any limit is set (else every start fits and nothing is sampled). */
  get enabled(): boolean {
    return this.#l.maxCpu > 0 || this.#l.maxMemory > 0;
  }

  /** Why a start asking `req` would go over the budget now, or undefined when it fits (or nothing is known). */
  check(req: StartRequest = NOTHING): string | undefined {
    if (!this.enabled) return undefined;
    const s = this.#usage.sample();
    if (!s) return undefined;
    const { maxCpu, maxMemory } = this.#l;
    if (maxCpu > 0 && s.cpuPercent + req.cpu > maxCpu) {
      return `resources.max_cpu_usage: cpu ${pct(s.cpuPercent)} + ${pct(req.cpu)} > ${pct(maxCpu)}`;
    }
    if (maxMemory > 0 && s.memoryTotalBytes > 0) {
      const used = (s.memoryBytes / s.memoryTotalBytes) * 100;
      const asked = (req.memoryBytes / s.memoryTotalBytes) * 100;
      if (used + asked > maxMemory) return `resources.max_memory_usage: memory ${pct(used)} + ${pct(asked)} > ${pct(maxMemory)}`;
    }
    return undefined;
  }

  /** Whether the machine is over the budget now (a start without limits would not fit). */
  get over(): boolean {
    return this.check() !== undefined;
  }

  /**
   * Resolves undefined once `req` fits (checked every poll), or why not when `ms` ran out; an
   * aborted wait resolves 'aborted' at once.
   */
  wait(req: StartRequest, ms: number, signal: AbortSignal): Promise<string | undefined> {
    const first = this.check(req);
    if (first === undefined || ms <= 0) return Promise.resolve(first);
    const deadline = performance.now() + ms;
    return new Promise((resolve) => {
      const done = (why: string | undefined) => {
        this.#waiters.delete(poll);
        signal.removeEventListener('abort', aborted);
        this.#idle();
        resolve(why);
      };
      const aborted = () => done('aborted');
      const poll = () => {
        const why = this.check(req);
        if (why === undefined || performance.now() >= deadline) done(why);
      };
      if (signal.aborted) return done('aborted');
      signal.addEventListener('abort', aborted, { once: true });
      this.#waiters.set(poll, aborted);
      this.#run();
    });
  }

  /** Calls `fn` whenever the machine goes over the budget or back under it; returns the unsubscribe. */
  onChange(fn: () => void): () => void {
    if (!this.enabled) return () => {};
    this.#listeners.add(fn);
    this.#over = this.over;
    this.#run();
    return () => {
      this.#listeners.delete(fn);
      this.#idle();
    };
  }

  close(): void {
    this.#listeners.clear();
    for (const abort of [...this.#waiters.values()]) abort();
    this.#idle();
  }

  #run(): void {
    this.#timer ??= setInterval(() => this.#tick(), this.#pollMs);
    this.#hold();
  }

  #idle(): void {
    if (!this.#timer) return;
    if (this.#listeners.size > 0 || this.#waiters.size > 0) return this.#hold();
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** A waiting start keeps the loop alive (it is work to do); listeners alone do not. */
  #hold(): void {
    if (this.#waiters.size > 0) this.#timer?.ref();
    else this.#timer?.unref();
  }

  #tick(): void {
    for (const poll of [...this.#waiters.keys()]) poll();
    if (this.#listeners.size === 0) return;
    const over = this.over;
    if (over === this.#over) return;
    this.#over = over;
    for (const fn of [...this.#listeners]) {
      try {
        fn();
      } catch {
        // a listener's failure must not stop the others
      }
    }
  }
}
