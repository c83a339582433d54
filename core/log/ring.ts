import { Writable } from 'node:stream';

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
  raw(): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    for (const line of this.lines()) {
      try {
        const { level: _l, time, msg, pid: _p, hostname: _h, ...rest } = JSON.parse(line) as Record<string, unknown>;
        out.push({ ts: new Date(Number(time)).toISOString(), ...rest, ...(msg ? { message: msg } : {}) });
      } catch { /* a torn line is skipped */ }
    }
    return out;
  }

  /** Console lines: `ts=.. level=INFO component="X" msg="..." key=value ...`. */
  console(): string[] {
    const out: string[] = [];
    for (const line of this.lines()) {
      try {
        const { level, time, msg, component, pid: _p, hostname: _h, ...rest } = JSON.parse(line) as Record<string, unknown>;
        let s = `ts=${new Date(Number(time)).toISOString().replace(/\.\d+Z$/, 'Z')} level=${levelName(Number(level))} component=${JSON.stringify(String(component ?? 'Core'))}`;
        if (msg) s += ` msg=${JSON.stringify(String(msg))}`;
        for (const k of Object.keys(rest).sort()) s += ` ${k}=${JSON.stringify(rest[k])}`;
        out.push(s.trimEnd());
      } catch { /* skip */ }
    }
    return out;
  }
}

function levelName(n: number): string {
  return n >= 50 ? 'ERROR' : n >= 40 ? 'WARN' : n >= 30 ? 'INFO' : 'DEBUG';
}
