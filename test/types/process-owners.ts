/**
 * Type tests of what issue 48 added to the SDK for plugins that own processes (the ladders
 * plugin): `ProcessesService.put` takes a whole definition and says what it did, `remove` says
 * whether there was one. Checked by `tsc -p test/types`; nothing here runs.
 */
import type { ProcessesService } from '@media-core/sdk';

/** True only when A and B are the same type (not merely assignable either way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
function check<T extends true>(): T | void {}

declare const processes: ProcessesService;
const def = {
  id: 'ladder:cam', reference: 'ladders', options: [], reconnect: true, reconnect_delay_seconds: 2, autostart: true, stale_timeout_seconds: 30,
  input: [{ id: 'in', address: '{rtmp,name=cam}', options: [] }],
  output: [{ id: 'out', address: '{rtmp,name=cam/360p}', options: ['-f', 'flv'] }],
  limits: { cpu_usage: 0, memory_mbytes: 0, waitfor_seconds: 0 },
  ondemand: { enable: true, idle_seconds: 0 },
};
check<Equal<Awaited<ReturnType<ProcessesService['put']>>, 'added' | 'replaced' | 'unchanged'>>();
check<Equal<Awaited<ReturnType<ProcessesService['remove']>>, boolean>>();
void processes.put(def);
// @ts-expect-error every field is given (no defaults are guessed for a plugin's process)
void processes.put({ id: 'x', input: [], output: [] });
void processes.remove('ladder:cam');
