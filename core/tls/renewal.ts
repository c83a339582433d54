/* When a certificate is renewed: pure, so the schedule is tested without waiting. */

/** Longest single timer (setTimeout holds 2^31-1 ms); a longer wait is re-planned when it fires. */
export const MAX_TIMER_MS = 24 * 3600 * 1000;

/**
 * The moment to renew: when a third of the lifetime is left (Let's Encrypt's 90 days → 30 days
 * ahead, as its clients do), so a failing CA leaves weeks of retries before expiry.
 */
export function renewAt(notBefore: Date, notAfter: Date): number {
  const life = notAfter.getTime() - notBefore.getTime();
  return notAfter.getTime() - Math.max(0, life) / 3;
}

/** Delay before the next attempt after `failures` failed ones: 10 s doubling, at most an hour. */
export function retryDelay(failures: number): number {
  return Math.min(3600_000, 10_000 * 2 ** Math.max(0, failures - 1));
}

/** Whether a certificate covers every wanted name (a changed `host.name` asks for a new one). */
export function coversNames(certNames: readonly string[], wanted: readonly string[]): boolean {
  const have = new Set(certNames.map((n) => n.toLowerCase()));
  return wanted.every((n) => have.has(n.toLowerCase()));
}
