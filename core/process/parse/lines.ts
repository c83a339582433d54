// ffmpeg ends its periodic stats with `\r` (so a terminal overwrites them in place) and everything else
// with `\n`; a pipe reader has to treat both as line ends, and chunks may cut a line anywhere.

/** Longest line kept whole; a stream that never sends a line end must not grow the buffer forever. */
export const MAX_LINE_LENGTH = 64 * 1024;

const LF = 10;
const CR = 13;

/**
 * Splits a stream of stderr chunks into lines on `\n`, `\r` and `\r\n`. Empty lines are skipped
 * (reference 7.3), which also makes `\r\n` a single break even when a chunk ends between the two.
 */
export class LineSplitter {
  readonly #onLine: (line: string) => void;
  readonly #maxLength: number;
  #decoder: TextDecoder | undefined;
  #pending = '';

  constructor(onLine: (line: string) => void, maxLength = MAX_LINE_LENGTH) {
    this.#onLine = onLine;
    this.#maxLength = maxLength;
  }

  /** Feeds a chunk; bytes are decoded as UTF-8, keeping a multi-byte character cut between chunks. */
  push(chunk: string | Uint8Array): void {
    let text: string;
    if (typeof chunk === 'string') {
      text = chunk;
    } else {
      this.#decoder ??= new TextDecoder('utf-8');
      text = this.#decoder.decode(chunk, { stream: true });
    }
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== LF && c !== CR) continue;
      if (i > start) this.#emit(this.#pending.length ? this.#pending + text.slice(start, i) : text.slice(start, i));
      else if (this.#pending.length) this.#emit(this.#pending);
      this.#pending = '';
      start = i + 1;
    }
    if (start < text.length) {
      this.#pending += text.slice(start);
      if (this.#pending.length >= this.#maxLength) {
        this.#emit(this.#pending);
        this.#pending = '';
      }
    }
  }

  /** Emits what is left after the stream ended (ffmpeg's last line may lack a line end). */
  end(): void {
    if (this.#decoder) {
      this.#pending += this.#decoder.decode();
      this.#decoder = undefined;
    }
    if (this.#pending.length) this.#emit(this.#pending);
    this.#pending = '';
  }

  #emit(line: string): void {
    if (line.length) this.#onLine(line);
  }
}

/** Splits a whole captured stderr text into its non-empty lines. */
export function splitLines(text: string): string[] {
  const lines: string[] = [];
  const splitter = new LineSplitter((line) => lines.push(line), Number.MAX_SAFE_INTEGER);
  splitter.push(text);
  splitter.end();
  return lines;
}

const LEVELS = ['trace', 'debug', 'verbose', 'info', 'warning', 'error', 'fatal', 'panic'];

/**
 * Index where the message starts once a `-loglevel level+...` tag like `[info] ` is skipped, so that
 * classification works whatever log flags the user chose; 0 when there is no such tag.
 */
export function messageStart(line: string): number {
  if (line.charCodeAt(0) !== 91 /* [ */) return 0;
  const close = line.indexOf('] ', 1);
  if (close < 0 || close > 8) return 0;
  for (const level of LEVELS) {
    if (level.length === close - 1 && line.startsWith(level, 1)) return close + 2;
  }
  return 0;
}

/** The line without a leading level tag. */
export function stripLevel(line: string): string {
  const start = messageStart(line);
  return start ? line.slice(start) : line;
}
