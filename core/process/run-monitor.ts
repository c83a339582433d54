import type { ProcessProgressInfo } from '../../sdk/index.ts';
import { progressJson, reportJson } from './json-write.ts';
import { buildReport, ProcessLog, ReportHistory } from './parse/log.ts';
import { emptyProgress, ProgressParser } from './parse/progress.ts';
import type { RunMonitor } from './run-monitor-types.ts';
import type { Progress } from './parse/schemas.ts';

export interface MonitorLimits {
  /** `encoder.log.max_lines` */
  maxLines: number;
  /** `encoder.log.max_history` */
  maxHistory: number;
}

/** What every stopped process shows; built once, since most processes of a big list are stopped. */
const IDLE = emptyProgress();
const IDLE_PROGRESS = progressJson(IDLE);

/**
 * The parse module wired for one process: stderr lines go to the progress parser, which hands
 * the non-progress ones to the run's log; each run's log moves to the history when the next
 * run starts.
 */
class ParsedRunMonitor implements RunMonitor {
  readonly #limits: MonitorLimits;
  readonly #log: ProcessLog;
  readonly #parser: ProgressParser;
  #history: ReportHistory;
  #lastProgressAt: number | undefined;
  #running = false;
  /** Bumped whenever the log or the history changes: the report JSON is rebuilt only then. */
  #version = 0;
  #report: { version: number; json: string } | undefined;

  constructor(limits: MonitorLimits) {
    this.#limits = limits;
    this.#log = new ProcessLog({ maxLines: limits.maxLines });
    this.#history = new ReportHistory(limits.maxHistory);
    this.#parser = new ProgressParser({ log: this.#log });
  }

  line(text: string): boolean {
    const kind = this.#parser.feed(text);
    if (kind === 'log') this.#version++;
    if (kind !== 'progress') return false;
    const at = this.#parser.lastProgressAt;
    if (at === this.#lastProgressAt) return false;
    this.#lastProgressAt = at;
    return true;
  }

  setIds(inputIds: readonly string[], outputIds: readonly string[]): void {
    this.#parser.setIds(inputIds, outputIds);
  }

  runStart(): void {
    // A run that printed nothing leaves no history entry (ReportHistory drops empty preludes).
    this.#history.push(this.#log.rotate());
    this.#version++;
    this.#parser.reset();
    this.#lastProgressAt = undefined;
    this.#running = true;
  }

  runEnd(state: string): void {
    this.#log.finish(state, this.#parser.snapshot());
    this.#version++;
    this.#parser.reset();
    this.#running = false;
  }

  note(text: string): void {
    this.#log.add(text, false);
    this.#version++;
  }

  progressJson(): string {
    return this.#running ? progressJson(this.#parser.progress) : IDLE_PROGRESS;
  }

  progress(): Readonly<Progress> {
    return this.#running ? this.#parser.progress : IDLE;
  }

  progressInfo(): ProcessProgressInfo {
    const p = this.#parser.progress;
    return {
      frame: p.frame, packet: p.packet, fps: p.fps, bitrateKbit: p.bitrate_kbit, sizeKb: p.size_kb,
      time: p.time, speed: p.speed, drop: p.drop, dup: p.dup,
    };
  }

  lastLogline(): string {
    return this.#log.lastLine;
  }

  reportJson(): string {
    if (this.#report?.version !== this.#version) {
      this.#report = { version: this.#version, json: reportJson(buildReport(this.#log, this.#history)) };
    }
    return this.#report.json;
  }

  adoptHistory(from: RunMonitor): void {
    if (!(from instanceof ParsedRunMonitor)) return;
    this.#history = new ReportHistory(this.#limits.maxHistory, [...from.#history.entries(), from.#log.toHistoryEntry()]);
    this.#version++;
  }
}

export function createRunMonitor(limits: MonitorLimits): RunMonitor {
  return new ParsedRunMonitor(limits);
}
