import pino, { type Logger } from 'pino';
import { LogRing } from './ring.ts';

export interface AppLogger {
  log: Logger;
  ring: LogRing;
}

/**
 * The app's logger: JSON lines to stdout (or nowhere, in tests) and into the ring that
 * `GET /api/v3/log` reads.
 */
export function createLogger(opts: { level: string; maxLines: number; stdout: boolean; ring?: LogRing }): AppLogger {
  const ring = opts.ring ?? new LogRing(opts.maxLines);
  const level = opts.level === 'silent' ? 'silent' : opts.level;
  const streams: pino.StreamEntry[] = [{ level: level as pino.Level, stream: ring }];
  if (opts.stdout) streams.push({ level: level as pino.Level, stream: process.stdout });
  const log = pino({ level, base: { component: 'Core' } }, pino.multistream(streams));
  return { log, ring };
}
