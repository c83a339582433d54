import { ApiError } from '../../sdk/index.ts';

/** Errors of the cluster plugin, with stable codes. */
export const clusterErrors = {
  /**
   * A compare-and-swap lost: the key changed (or exists, for a create) since the caller read it.
   * The caller re-reads and retries, or reports the conflict (409) to its client.
   */
  conflict: (what: string) => new ApiError(409, 'Conflict', [`${what} changed meanwhile on another node`], 'CLUSTER_CONFLICT'),
  /** NATS cannot take a write now (not connected yet, partitioned, no quorum): retry later. */
  unavailable: (why: string) => new ApiError(503, 'Service Unavailable', [`the cluster store cannot take the change: ${why}`], 'CLUSTER_UNAVAILABLE'),
  /** A process id that cannot be a key (empty). */
  badId: (id: string) => new ApiError(400, 'Bad Request', [`invalid process id ${JSON.stringify(id)}`], 'CLUSTER_BAD_ID'),
};

/** True for the error `clusterErrors.conflict` builds. */
export function isConflict(err: unknown): boolean {
  return err instanceof ApiError && err.errorCode === 'CLUSTER_CONFLICT';
}

/** The server refused a compare-and-swap: someone else wrote the key (or it exists, for `create`). */
export function isWrongRevision(err: unknown): boolean {
  // 10071: JetStream's "wrong last sequence" (the expected-last-subject-sequence header failed)
  const e = err as { api_error?: { err_code?: number }; message?: string } | undefined;
  return e?.api_error?.err_code === 10071 || /wrong last sequence/i.test(e?.message ?? '');
}
