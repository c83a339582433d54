// What a process report keeps of ffmpeg's stderr (reference 5.7 and 7.8): the last non-progress lines
// of the current run, the prelude (head and tail of the lines printed before progress started) and
// the reports of earlier runs. Progress lines never get here: the progress parser filters them out.
import type { LogEntry, Progress, ProcessReport, ReportHistoryEntry, ReportLogLine } from './schemas.ts';

export interface ProcessLogOptions {
  /** `encoder.log.max_lines` (default 50). */
  maxLines?: number;
  /** Prelude lines kept from the start and from the end (reference: 100 and 50). */
  preludeHead?: number;
  preludeTail?: number;
  /** Clock in milliseconds. */
  now?: () => number;
}

/**
 * Fixed-size ring of the newest lines; two parallel arrays so adding a line allocates nothing. They
 * are made at the first line: a stored process that never ran holds none (issue 46.4: 1,000 of
 * them at start).
 */
class LineRing {
  readonly #capacity: number;
  #lines: string[] | undefined;
  #times: Float64Array | undefined;
  #next = 0;
  #size = 0;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get size(): number {
    return this.#size;
  }

  push(line: string, time: number): void {
    const cap = this.#capacity;
    if (!cap) return;
    const lines = (this.#lines ??= new Array<string>(cap).fill(''));
    const times = (this.#times ??= new Float64Array(cap));
    lines[this.#next] = line;
    times[this.#next] = time;
    this.#next = (this.#next + 1) % cap;
    if (this.#size < cap) this.#size++;
  }

  /** Oldest first. */
  forEach(fn: (line: string, time: number) => void): void {
    const cap = this.#capacity;
    for (let i = 0; i < this.#size; i++) {
      const k = (this.#next - this.#size + i + cap) % cap;
      fn(this.#lines![k]!, this.#times![k]!);
    }
  }

  newest(): string {
    if (!this.#size) return '';
    const cap = this.#capacity;
    return this.#lines![(this.#next - 1 + cap) % cap]!;
  }

  clear(): void {
    this.#lines?.fill('');
    this.#next = 0;
    this.#size = 0;
  }
}

/** The lines of one run of ffmpeg. */
export class ProcessLog {
  readonly #now: () => number;
  readonly #headMax: number;
  readonly #log: LineRing;
  readonly #head: string[] = [];
  readonly #tail: LineRing;
  #beyondHead = 0;
  #createdAt: number;
  #exitState: string | undefined;
  #progress: Progress | undefined;

  constructor(options: ProcessLogOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#headMax = Math.max(0, options.preludeHead ?? 100);
    this.#log = new LineRing(Math.max(1, options.maxLines ?? 50));
    this.#tail = new LineRing(Math.max(0, options.preludeTail ?? 50));
    this.#createdAt = this.#now();
  }

  /** Milliseconds. */
  get createdAt(): number {
    return this.#createdAt;
  }

  /** Adds a non-progress line; `prelude` says whether progress has not started yet. */
  add(line: string, prelude: boolean): void {
    const now = this.#now();
    this.#log.push(line, now);
    if (!prelude) return;
    if (this.#head.length < this.#headMax) {
      this.#head.push(line);
    } else {
      this.#tail.push(line, now);
      this.#beyondHead++;
    }
  }

  /** Newest line of the log ring: the state's `last_logline`. */
  get lastLine(): string {
    return this.#log.newest();
  }

  /** First lines, then `... truncated N lines ...` if some were dropped, then the last lines. */
  prelude(): string[] {
    const out = this.#head.slice();
    const dropped = this.#beyondHead - this.#tail.size;
    if (dropped > 0) out.push(`... truncated ${dropped} lines ...`);
    this.#tail.forEach((line) => out.push(line));
    return out;
  }

  /** The log ring, oldest first. */
  entries(): LogEntry[] {
    const out: LogEntry[] = [];
    this.#log.forEach((data, timestamp) => out.push({ timestamp, data }));
    return out;
  }

  /** Records how the run ended, for the history entry it becomes on the next rotate(). */
  finish(exitState: string, progress?: Progress): void {
    this.#exitState = exitState;
    this.#progress = progress;
  }

  /** This run as a history entry. */
  toHistoryEntry(): ReportHistoryEntry {
    const entry: ReportHistoryEntry = {
      created_at: Math.floor(this.#createdAt / 1000),
      prelude: this.prelude(),
      log: toReportLog(this.entries()),
    };
    if (this.#exitState !== undefined) entry.exit_state = this.#exitState;
    if (this.#progress !== undefined) entry.progress = this.#progress;
    return entry;
  }

  /** Ends this run's log at a (re)start of ffmpeg: returns it as a history entry and starts afresh. */
  rotate(): ReportHistoryEntry {
    const entry = this.toHistoryEntry();
    this.clear();
    return entry;
  }

  /** Empties log and prelude and starts a new run (the original's ResetLog). */
  clear(): void {
    this.#log.clear();
    this.#tail.clear();
    this.#head.length = 0;
    this.#beyondHead = 0;
    this.#exitState = undefined;
    this.#progress = undefined;
    this.#createdAt = this.#now();
  }
}

/** Reports of earlier runs, oldest first, at most `encoder.log.max_history` of them. */
export class ReportHistory {
  readonly #max: number;
  #entries: ReportHistoryEntry[] = [];

  constructor(maxEntries = 3, entries: readonly ReportHistoryEntry[] = []) {
    this.#max = Math.max(0, maxEntries);
    for (const e of entries) this.push(e);
  }

  /** Keeps `entry` unless its prelude is empty (a run that printed nothing); false if dropped. */
  push(entry: ReportHistoryEntry): boolean {
    if (!entry.prelude.length || this.#max === 0) return false;
    this.#entries.push(entry);
    if (this.#entries.length > this.#max) this.#entries.splice(0, this.#entries.length - this.#max);
    return true;
  }

  /** Oldest first; a copy, so callers may keep it (history is carried over a process update). */
  entries(): ReportHistoryEntry[] {
    return this.#entries.slice();
  }

  clear(): void {
    this.#entries = [];
  }
}

/** Log entries in the report's wire form `["<unix seconds>", "<line>"]`. */
export function toReportLog(entries: readonly LogEntry[]): ReportLogLine[] {
  return entries.map((e) => [String(Math.floor(e.timestamp / 1000)), e.data]);
}

/** The `report` of a process (reference 5.7). */
export function buildReport(log: ProcessLog, history: ReportHistory): ProcessReport {
  return {
    created_at: Math.floor(log.createdAt / 1000),
    prelude: log.prelude(),
    log: toReportLog(log.entries()),
    history: history.entries(),
  };
}
