import type { ProcessesService } from '../../sdk/index.ts';
import type { WidgetProcess } from './schema.ts';

/**
 * Session counts for a process reference, from the sessions plugin. Without it the widget
 * reports zeros (what the reference asks for when sessions are disabled, instead of the
 * original's panic).
 */
export interface SessionCounts {
  /** Active `hls` sessions whose reference starts with `reference` ('' matches all). */
  current(reference: string): number;
  /** Historic `hls` session counts over references starting with `reference`. */
  total(reference: string): number;
}

const NO_SESSIONS: SessionCounts = { current: () => 0, total: () => 0 };

/** The widget's figures for one process, or undefined for an unknown one. */
export function widgetOf(processes: ProcessesService, id: string, sessions: SessionCounts = NO_SESSIONS): WidgetProcess | undefined {
  const p = processes.get(id);
  if (!p) return undefined;
  return {
    current_sessions: sessions.current(p.reference),
    total_sessions: sessions.total(p.reference),
    uptime: p.exec === 'running' ? p.runtimeSeconds : 0,
  };
}
