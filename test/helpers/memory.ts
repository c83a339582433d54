import { setImmediate as turn } from 'node:timers/promises';
import { v8Gc } from '../../core/runtime/v8-gc.ts';

/**
 * Heap and ArrayBuffer bytes this process holds after full collections: what is still reachable,
 * whatever the collector's timing (tests of what a workload leaves behind compare two of these).
 * A few turns of the event loop first, so that the runtime's lists of finished async operations
 * (which the test runner's async tracking fills) are drained.
 */
export async function usedAfterGc(): Promise<{ heap: number; buffers: number }> {
  const gc = v8Gc();
  if (!gc) throw new Error('this runtime gives no gc');
  for (let i = 0; i < 3; i++) {
    await turn();
    gc({ type: 'major', execution: 'sync' });
  }
  const m = process.memoryUsage();
  return { heap: m.heapUsed, buffers: m.arrayBuffers };
}
