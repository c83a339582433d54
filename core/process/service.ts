import type { ProcessesService, ProcessProgressInfo, ProcessStateCounts } from '../../sdk/index.ts';
import type { ProcessManager } from './manager.ts';

/** The `processes` service other plugins use (widget, sessions, playout, metrics): cheap views, no logs. */
export function processesService(m: ProcessManager, stateEntries: ProcessStateCounts): ProcessesService {
  return {
    list: () => [...m.values()].map((e) => e.info()),
    get: (id) => m.get(id)?.info(),
    progress: (id): ProcessProgressInfo | undefined => m.get(id)?.monitor.progressInfo(),
    metadata: (id, key) => m.metadata(id)?.[key],
    metrics: (id) => m.get(id)?.metricsInfo(),
    stateEntries: () => stateEntries,
  };
}
