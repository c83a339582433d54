import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import { maskCredentials } from '../../sdk/index.ts';
import { consoleLine, dedupeBindings } from './console-format.ts';
import { LogRing } from './ring.ts';

export interface AppLogger {
  log: Logger;
  ring: LogRing;
}

export interface LoggerOptions {
  level: string;
  maxLines: number;
  /** Also write to this stream (the CLI passes stdout; tests pass nothing or a capture). */
  stdout?: NodeJS.WritableStream & { isTTY?: boolean };
  /** `json`, `console` or `auto` (console when the output is a terminal). */
  format?: string;
  /** Components shown on the output (empty = all); the ring keeps every component (reference 12.6). */
  topics?: readonly string[];
  ring?: LogRing;
}

/**
 * The app's logger: JSON lines into the ring that `GET /api/v3/log` reads, and to stdout as
 * JSON or console lines. Every line has each key once: a child's `component` replaces its
 * parent's instead of being appended after it (pino appends bindings). No line carries a
 * credential: each is masked as written (`maskCredentials`: URL user info, `token=`,
 * `passphrase=`, ...), whoever logged it and however (a message, a field, an error's text).
 */
export function createLogger(opts: LoggerOptions): AppLogger {
  const ring = opts.ring ?? new LogRing(opts.maxLines);
  const level = opts.level as pino.Level;
  const streams: pino.StreamEntry[] = [{ level, stream: ring }];
  if (opts.stdout) streams.push({ level, stream: outputStream(opts.stdout, opts.format ?? 'auto', opts.topics ?? []) });
  const chindings = pino.symbols.chindingsSym as unknown as string;
  const log = pino({
    level,
    base: { component: 'Core' },
    hooks: { streamWrite: maskCredentials },
    // inherited by every descendant: runs once per child, not per line
    onChild(child) {
      const c = child as unknown as Record<string, string>;
      c[chindings] = dedupeBindings(c[chindings]!);
    },
  }, pino.multistream(streams));
  return { log, ring };
}

function outputStream(out: NodeJS.WritableStream & { isTTY?: boolean }, format: string, topics: readonly string[]): NodeJS.WritableStream {
  const asConsole = format === 'console' || (format === 'auto' && !!out.isTTY);
  if (!asConsole && topics.length === 0) return out;
  const shown = new Set(topics);
  return new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _enc, cb) {
      const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
      try {
        const event = JSON.parse(text) as Record<string, unknown>;
        if (shown.size && !shown.has(String(event.component ?? 'Core'))) return cb();
        out.write(asConsole ? `${consoleLine(event)}\n` : text);
      } catch {
        out.write(text);
      }
      cb();
    },
  });
}
