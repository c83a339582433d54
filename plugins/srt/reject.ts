/**
 * libsrt's access-control reject codes the plugin uses (SRT_REJX_*, access_control.h), and the two
 * of libsrt's own reasons (SRT_REJ_BADSECRET, SRT_REJ_UNSECURE) for a key mismatch found at accept.
 */
export const REJECT = {
  badSecret: 10,
  unsecured: 11,
  badRequest: 1400,
  unauthorized: 1401,
  overloaded: 1402,
  forbidden: 1403,
  notFound: 1404,
  badMode: 1405,
  conflict: 1409,
} as const;

const NAMES: Record<number, string> = Object.fromEntries(Object.entries(REJECT).map(([k, v]) => [v, k]));

/** A reject code as a word for the log (`unauthorized`), or libsrt's number when not ours. */
export function rejectName(code: number): string {
  return NAMES[code] ?? `reason ${code}`;
}
