import type { EventTypeDeclaration } from '../../sdk/index.ts';

/*
 * The event types of the process engine (its `events`). The engine reports through its hooks
 * (`processHooksRef`); the provider of `eventsRef` turns them into these events.
 */

const PROC = ['process', 'reference'];

function spec(type: string, description: string, payload: Record<string, string> = {}): EventTypeDeclaration {
  return Object.freeze({ type, subject: PROC, description, payload });
}

export const PROCESS_EVENT_TYPES: readonly EventTypeDeclaration[] = Object.freeze([
  spec('process.added', 'A process was created (saved, before it starts).'),
  spec('process.updated', 'A process was replaced by `PUT` (saved; the old run stopped).', {
    previous_id: 'the id before the change',
  }),
  spec('process.deleted', 'A process was deleted (its `purge_on_delete` files are gone).'),
  spec('process.state', 'A process moved from one exec state to another.', {
    from: 'previous exec state', to: 'new exec state',
    reason: 'why, when the supervisor knows (stale, limit, veto, spawn error, `reconnect`, `schedule`, `duration`)',
    cause: '`reconnect`, `stale`, `limit`, `prepare`, `spawn`, `schedule`, `duration`, `demand`, `idle`, `budget` or `maker` when the engine moved it itself',
    last_logline: 'the last log line',
  }),
  spec('process.scheduled', 'A scheduled process waits for its next start (`scheduler`).', {
    next_run: 'the next start, RFC 3339 in UTC',
  }),
  spec('process.demand.start', 'An on-demand process (`ondemand.enable`) started for a reader that asked for its HLS files or its stream.', {
    reason: '`hls` or `stream`', readers: 'readers at the time',
  }),
  spec('process.demand.stop', 'An on-demand process stopped: no reader for its idle time (`ondemand.idle_seconds`); it waits again.', {
    reason: '`idle`', readers: 'readers at the time (0)',
  }),
  spec('process.budget.wait', 'A start the engine made (at boot, autostart, restart, reconnect, schedule, demand) waits for the machine to get under the resource budget (`resources.max_cpu_usage` / `max_memory_usage`, at most `resources.wait_seconds`).', {
    start: 'what started it: `start`, `reconnect`, `schedule` or `demand`', reason: 'the limit and the figures',
  }),
  spec('process.budget.refuse', 'A start was refused by the resource budget: the `start` command (503 `PROCESS_OVER_BUDGET`), or a start whose wait ran out (it ends `failed`, cause `budget`).', {
    start: 'what started it: `start`, `reconnect`, `schedule` or `demand`', reason: 'the limit and the figures',
  }),
  spec('process.reconnect', 'The supervisor starts a process again after its run ended (`reconnect`).'),
  spec('process.stale', 'A process was killed for making no progress (`stale_timeout_seconds`).', { reason: 'the message' }),
  spec('process.limit', 'A process was killed for exceeding its cpu or memory limit.', { reason: 'the message' }),
]);
