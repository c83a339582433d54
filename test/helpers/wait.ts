/**
 * Polls `fn` until it returns a truthy value or the deadline passes (then throws with `what`).
 * Tests wait this way instead of sleeping a guessed time.
 */
export async function waitFor<T>(fn: () => T | Promise<T>, opts: { timeout?: number; interval?: number; what?: string } = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + (opts.timeout ?? 20_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${opts.what ?? 'condition'}${last ? `: ${(last as Error).message}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, opts.interval ?? 100));
  }
}
