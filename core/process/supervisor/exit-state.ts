/** The states of a supervised process (reference 7.1). */
export type ExecState = 'finished' | 'starting' | 'running' | 'finishing' | 'failed' | 'killed';

/** States in which a child exists or is about to; the API calls them "running". */
export const ACTIVE_STATES: ReadonlySet<ExecState> = new Set<ExecState>(['starting', 'running', 'finishing']);

// Reference 7.1: any other transition request is ignored, which keeps a late event (e.g. an exit
// arriving after a veto) from moving a process into a state it cannot be in.
const ALLOWED: Readonly<Record<ExecState, readonly ExecState[]>> = {
  finished: ['starting'],
  starting: ['running', 'finishing', 'failed'],
  running: ['finished', 'finishing', 'failed', 'killed'],
  finishing: ['finished', 'failed', 'killed'],
  failed: ['starting'],
  killed: ['starting'],
};

export function canTransition(from: ExecState, to: ExecState): boolean {
  return ALLOWED[from].includes(to);
}

/**
 * Final state of a run from how the child ended. Exit code 255 is what ffmpeg returns after
 * SIGINT, i.e. after an orderly stop, so it counts as `finished`.
 */
export function exitState(exitCode: number | null, signal: string | null): ExecState {
  if (signal !== null) return 'killed';
  if (exitCode === 0 || exitCode === 255) return 'finished';
  return 'failed';
}
