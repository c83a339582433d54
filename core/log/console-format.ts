/**
 * The reference's console format (12.6), one string per event:
 * `ts=<RFC3339 s> level=<LEVEL> component="<C>" [msg="..."] key=value ...`, the other fields sorted.
 * Used by `GET /api/v3/log` and by the terminal output (`log.format`).
 */
export function consoleLine(event: Record<string, unknown>): string {
  const { level, time, msg, component, pid: _p, hostname: _h, ...rest } = event;
  let s = `ts=${new Date(Number(time)).toISOString().replace(/\.\d+Z$/, 'Z')} level=${levelName(Number(level))} component=${JSON.stringify(String(component ?? 'Core'))}`;
  if (msg) s += ` msg=${JSON.stringify(String(msg))}`;
  for (const k of Object.keys(rest).sort()) s += ` ${k}=${JSON.stringify(rest[k])}`;
  return s.trimEnd();
}

export function levelName(n: number): string {
  return n >= 50 ? 'ERROR' : n >= 40 ? 'WARN' : n >= 30 ? 'INFO' : 'DEBUG';
}

/**
 * Removes a repeated key from pino's serialized bindings (`,"k":v,...`), keeping the last value:
 * a child logger with its own `component` must not print the parent's as well. The bindings are
 * a JSON object's body, so JSON.parse (last key wins) does it; only done when a key repeats.
 */
export function dedupeBindings(chindings: string): string {
  if (!chindings || chindings.indexOf('"component":') === chindings.lastIndexOf('"component":')) return chindings;
  try {
    const obj = JSON.parse(`{${chindings.slice(1)}}`) as Record<string, unknown>;
    return `,${JSON.stringify(obj).slice(1, -1)}`;
  } catch {
    return chindings;
  }
}
