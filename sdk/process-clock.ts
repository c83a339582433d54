import { createServiceRef } from './refs.ts';

/**
 * The clock of process schedules: the real one unless a test provides another (with `override`)
 * to advance time. `setTimeout` returns a function that cancels the timer.
 *
 * @example
 * const kit = await createTestApp({ overrides: [override(processClockRef, myClock)] });
 */
export interface ProcessClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): () => void;
}

/**
 * The process schedules' clock (optional: the process engine uses the real one when nobody
 * provides it; tests override it).
 *
 * @example
 * deps: { clock: optional(processClockRef) }
 */
export const processClockRef = createServiceRef<ProcessClock>('process-clock');
