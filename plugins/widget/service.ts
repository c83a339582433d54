import type { ProcessesService } from '../../sdk/index.ts';
import type { WidgetProcess } from './schema.ts';

/**
 * Session counts for a process reference, from the sessions plugin. Without it the widget
 * reports zeros (what the reference asks for when sessions are disabled, instead of the
 * original's panic).
 */
export interface SessionCounts {
  /**
   * Over the `hls` sessions whose reference starts with `reference` ('' matches all): the active
   * ones (`current`) and the historic count (`total`), in one call per request.
   */
  counts(reference: string): { current: number; total: number };
}

const NO_SESSIONS: SessionCounts = { counts: () => ({ current: 0, total: 0 }) };

/** The widget's figures for one process, or undefined for an unknown one. */
export function widgetOf(processes: ProcessesService, id: string, sessions: SessionCounts = NO_SESSIONS): WidgetProcess | undefined {
  const p = processes.get(id);
  if (!p) return undefined;
  const c = sessions.counts(p.reference);
  return {
    current_sessions: c.current,
    total_sessions: c.total,
    uptime: p.exec === 'running' ? p.runtimeSeconds : 0,
  };
}
