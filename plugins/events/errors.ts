import { ApiError } from '../../sdk/index.ts';

/** The events plugin's refusals (stable codes, Error body). */
export const eventsErrors = {
  /** A `types` / `subjects` glob that does not compile. */
  badFilter: (detail: string) => new ApiError(400, 'Invalid event filter', [detail], 'EVENTS_BAD_FILTER'),
};
