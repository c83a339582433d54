import type { ProcessProgressInfo } from '../../sdk/index.ts';
import type { Progress } from './parse/schemas.ts';

/**
 * What a process entry needs from the stderr parsers (core/process/parse): one per process,
 * fed every stderr line, reset at each run. The implementation in run-monitor.ts adapts the
 * parse module to this.
 */
export interface RunMonitor {
  /** Feeds one stderr line; true when it was a progress line showing new progress (stale watchdog). */
  line(text: string): boolean;
  /** A run begins: the report of the last run moves to the history, progress starts from zero. */
  runStart(): void;
  /** The run ended with this exec state: progress figures reset (the log stays readable). */
  runEnd(state: string): void;
  /** The config IDs of the inputs and outputs by position, for the progress streams. */
  setIds(inputIds: readonly string[], outputIds: readonly string[]): void;
  /** A line of our own in the current log (e.g. why a start was vetoed). */
  note(text: string): void;
  /** The API's Progress as JSON (reference 5.6). */
  progressJson(): string;
  /** The figures plugins see. */
  progressInfo(): ProcessProgressInfo;
  /** The live Progress of the current run (idle zeros when not running); read, never keep or change. */
  progress(): Readonly<Progress>;
  lastLogline(): string;
  /** The API's ProcessReport as JSON (reference 5.7). */
  reportJson(): string;
  /** The history of another monitor (carried over by PUT). */
  adoptHistory(from: RunMonitor): void;
}
