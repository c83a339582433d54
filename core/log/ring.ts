import { Writable } from 'node:stream';
import { consoleLine } from './console-format.ts';

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
    this.#lines[this.#next] = line;
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
