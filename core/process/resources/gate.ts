import type { Logger } from 'pino';
import type { processHooksRef } from '../../../sdk/index.ts';
import { processErrors } from '../errors.ts';
import type { ResourceBudget, StartRequest } from './budget.ts';

type ProcessHooks = ReturnType<typeof processHooksRef.create>;

/** The process a start is for, as the gate reports it. */
export interface BudgetSubject {
  id: string;
  reference: string;
  request: StartRequest;
  /** Notes a line in the process's report log (and so its `last_logline`). */
  note(line: string): void;
}

/**
 * Where starts meet the resource budget (budget.ts): a start the engine makes itself waits (at
 * most `resources.wait_seconds`), the `start` command is refused with 503. Each wait and refusal
 * is an `onBudget` event (`process.budget.wait` / `.refuse`), a log line and a line in the process's log.
 */
export class BudgetGate {
  readonly budget: ResourceBudget;
  readonly #waitMs: number;
  readonly #hooks: Readonly<ProcessHooks>;
  readonly #log: Logger;

  constructor(budget: ResourceBudget, waitSeconds: number, hooks: Readonly<ProcessHooks>, log: Logger) {
    this.budget = budget;
    this.#waitMs = waitSeconds * 1000;
    this.#hooks = hooks;
    this.#log = log;
  }

  /**
   * Before a spawn (`start`: what started it): undefined to go ahead, or why not; a promise of
   * either while it waits (the budget's reason once the wait ran out, 'aborted' when a stop called it off).
   */
  admit(p: BudgetSubject, start: string, signal: AbortSignal): string | undefined | Promise<string | undefined> {
    const over = this.budget.check(p.request);
    if (over === undefined) return undefined;
    if (this.#waitMs <= 0) return this.#refuse(p, start, over);
    this.#tell(p, 'wait', start, over);
    p.note(`waiting up to ${this.#waitMs / 1000} s for the resource budget: ${over}`);
    return this.budget.wait(p.request, this.#waitMs, signal)
      .then((why) => (why === undefined || why === 'aborted' ? why : this.#refuse(p, start, why)));
  }

  #refuse(p: BudgetSubject, start: string, why: string): string {
    this.#tell(p, 'refuse', start, why);
    return `over the resource budget: ${why}`;
  }

  /** The `start` command of a process that does not run: refused (503) while the start would not fit. */
  command(p: Omit<BudgetSubject, 'note'>): void {
    const over = this.budget.check(p.request);
    if (over === undefined) return;
    this.#tell(p, 'refuse', 'start', over);
    throw processErrors.overBudget(over);
  }

  /** A demand would start the process: true (refused, told) while it would not fit. */
  demand(p: Omit<BudgetSubject, 'note'>): boolean {
    const over = this.budget.check(p.request);
    if (over === undefined) return false;
    this.#tell(p, 'refuse', 'demand', over);
    return true;
  }

  #tell(p: Pick<BudgetSubject, 'id' | 'reference'>, action: 'wait' | 'refuse', start: string, reason: string): void {
    this.#log.warn({ process: p.id, start, reason, code: 'PROCESS_OVER_BUDGET' },
      action === 'wait' ? 'start waits for the resource budget' : 'start refused by the resource budget');
    const hook = this.#hooks.onBudget;
    if (!hook.taps.length) return;
    hook.promise({ id: p.id, reference: p.reference, action, start, reason })
      .catch((err: unknown) => this.#log.warn({ err, process: p.id }, 'onBudget tap failed'));
  }
}
