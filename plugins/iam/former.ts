/*
 * The names a user had (issue 49, makers): a process keeps its maker by name, so a user renamed
 * must still be found as the maker of what it made under its old name, and a user given that
 * name later (made, or renamed to it) must not be. Each rename keeps the old name with the time
 * it was had from and until; the user that held a name at a process's making is the one asked.
 */

/** A name a user had, from `from` until a rename at `until` (unix seconds). */
export interface FormerName { name: string; from: number; until: number }

/** Former names kept per user (the most recent): a process made under an older one is refused. */
export const MAX_FORMER_NAMES = 16;

/** A time as stored: whole unix seconds, not before 1970 (a hand-edited negative one would predate every process). */
const second = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/**
 * Former names as stored (a hand-edited file: anything else dropped; one without `from`, as an
 * earlier build wrote them, was had since the name before it ended, the first since 0).
 */
export function formerNames(v: unknown): FormerName[] {
  if (!Array.isArray(v)) return [];
  const out: FormerName[] = [];
  for (const f of v as Array<Partial<FormerName> | null>) {
    if (typeof f?.name !== 'string' || !second(f.until)) continue;
    const from = second(f.from) ? f.from : out.at(-1)?.until ?? 0;
    // a name had until before it was had matches no time: dropped
    if (from <= f.until) out.push({ name: f.name, from, until: f.until });
  }
  return out.slice(-MAX_FORMER_NAMES);
}

/** When a stored user got its current name (a store from before: its last rename, else when it was made). */
export const namedAt = (x: { named_at?: unknown }, former: readonly FormerName[], createdAt: number): number =>
  (second(x.named_at) ? x.named_at : former.at(-1)?.until ?? createdAt);

/** `former` with `name`, had since `from`, ended at `at` (a rename). */
export function withFormer(former: readonly FormerName[], name: string, from: number, at: number): FormerName[] {
  return [...former, { name, from, until: at }].slice(-MAX_FORMER_NAMES);
}

interface Holder { name: string; named_at: number; former: readonly FormerName[] }

/**
 * The user that was named `name` at `since` (unix seconds): the one that has had the name since
 * before then, else the one user that had it then (renamed since). Times are whole seconds: when
 * two users had the name within that second (one renamed from it, another given it), none is.
 */
export function holderAt<U extends Holder>(users: readonly U[], name: string, since: number): U | undefined {
  let found: U | undefined;
  for (const u of users) {
    if (u.name === name && u.named_at < since) return u;
    const had = (u.name === name && u.named_at === since) || u.former.some((f) => f.name === name && f.from <= since && f.until >= since);
    if (!had || found === u) continue;
    if (found) return undefined;
    found = u;
  }
  return found;
}
