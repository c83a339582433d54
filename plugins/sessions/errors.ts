import type { FsServeRefusal } from '../../sdk/fs-hooks.ts';

/** Refusals of new HLS viewers (reference 11.6), with stable codes. */
export const sessionRefusals = {
  /** A `session` value that is not a 22-character short UUID. */
  badId: (): FsServeRefusal => ({ status: 403, message: 'Forbidden', details: ['Invalid session ID'], code: 'SESSIONS_BAD_ID' }),
  /**
   * `max_sessions` or `max_bitrate_mbit` reached; 509 has no reason phrase, the reference sends
   * this literal message (sic).
   */
  limit: (reason: string): FsServeRefusal => ({ status: 509, message: 'Bandwith limit exceeded', details: [reason], code: 'SESSIONS_LIMIT' }),
};
