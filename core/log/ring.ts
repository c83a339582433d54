import { Writable } from 'node:stream';
import { consoleLine } from './console-format.ts';

/**
 * The longest line kept as it is: the ring holds at most N lines of this (16 MB for 1,000), however
 * long what a client sent (a stream name of 65,000 characters logged three times made ~195 KB lines:
 * 1,000 of them were 195 MB, and reading the log held the service for seconds).
 */
export const MAX_LINE_CHARS = 16 * 1024;
/** What is kept of each string of a shortened line. */
const MAX_VALUE_CHARS = 1024;

/** A line over MAX_LINE_CHARS with each long string cut (and saying so); a line still too long keeps its level, time and message only. */
function shortened(line: string): string {
  try {
    const cut = (v: unknown): unknown => {
      if (typeof v === 'string') return v.length > MAX_VALUE_CHARS ? `${v.slice(0, MAX_VALUE_CHARS)}... (${v.length} characters)` : v;
      if (Array.isArray(v)) return v.map(cut);
      if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, cut(x)]));
      return v;
    };
    const e = cut(JSON.parse(line)) as Record<string, unknown>;
    const out = JSON.stringify(e);
    if (out.length <= MAX_LINE_CHARS) return out;
    return JSON.stringify({ level: e.level, time: e.time, msg: cut(e.msg), shortened: `a line of ${line.length} characters` });
  } catch {
    return JSON.stringify({ level: 40, time: Date.now(), msg: `a log line of ${line.length} characters could not be kept` });
  }
}

/**
 * Keeps the last N log lines as pino wrote them (JSON text). Parsing happens only when
 * someone reads the log, so logging stays cheap.
 */
export class LogRing extends Writable {
  #lines: string[] = [];
  #next = 0;
  #full = false;
  readonly #max: number;

  constructor(max: number) {
    super({ decodeStrings: false });
    this.#max = Math.max(0, max);
  }

  override _write(chunk: string | Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.push(typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    cb();
  }

  push(line: string): void {
    if (this.#max === 0) return;
    this.#lines[this.#next] = line.length > MAX_LINE_CHARS ? shortened(line) : line;
    this.#next = (this.#next + 1) % this.#max;
    if (this.#next === 0) this.#full = true;
  }

  /** Oldest first. */
  lines(): string[] {
    return this.#full ? [...this.#lines.slice(this.#next), ...this.#lines.slice(0, this.#next)] : this.#lines.slice(0, this.#next);
  }

  /** The events as objects (LogEvent): fields plus `ts`, `component`, `message`; no level. */
  raw(keep?: (event: Readonly<Record<string, unknown>>) => boolean): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    for (const line of this.lines()) {
      try {
        const e = JSON.parse(line) as Record<string, unknown>;
        if (keep && !keep(e)) continue;
        const { level: _l, time, msg, pid: _p, hostname: _h, ...rest } = e;
        out.push({ ts: new Date(Number(time)).toISOString(), ...rest, ...(msg ? { message: msg } : {}) });
      } catch { /* a torn line is skipped */ }
    }
    return out;
  }

  /** Console lines (reference 12.6), see consoleLine. */
  console(keep?: (event: Readonly<Record<string, unknown>>) => boolean): string[] {
    const out: string[] = [];
    for (const line of this.lines()) {
      try {
        const e = JSON.parse(line) as Record<string, unknown>;
        if (!keep || keep(e)) out.push(consoleLine(e));
      } catch { /* a torn line is skipped */ }
    }
    return out;
  }
}
