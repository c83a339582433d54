/**
 * The per-process supervisor (reference 7.1-7.4). The process manager creates one UsageSampler
 * per app and one Supervisor per process.
 */
export { Supervisor } from './supervisor.ts';
export { UsageSampler, type UsageListener, type UsageSamplerOptions } from './usage-sampler.ts';
export { ACTIVE_STATES, canTransition, exitState, type ExecState } from './exit-state.ts';
export { LimitWatch, type SupervisorLimits } from './limit-watch.ts';
// The stderr splitter is the parser's (one implementation); re-exported for the engine's other readers.
export { LineSplitter } from '../parse/lines.ts';
export type { RunEndInfo, Sampler, SpawnChild, StateCause, SupervisorOptions, SupervisorStatus } from './types.ts';
export { PidDir, reapOrphans, isSameProcess, parseRecord, startTimeOf, type PidFiles, type PidRecord } from './orphans.ts';
