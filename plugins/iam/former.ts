/*
 * The names a user had (issue 49, makers): a process keeps its maker by name, so a user renamed
 * must still be found as the maker of what it made under its old name, and a user given that
 * name later must not be. Each rename keeps the old name with the time it ended; the user that
 * held a name at a process's making is the one asked for it.
 */

/** A name a user had, until a rename at `until` (unix seconds). */
export interface FormerName { name: string; until: number }

/** Former names kept per user (the most recent): a process made under an older one is refused. */
export const MAX_FORMER_NAMES = 16;

/** Former names as stored (a hand-edited file: anything else dropped). */
export function formerNames(v: unknown): FormerName[] {
  if (!Array.isArray(v)) return [];
  return v.filter((f): f is FormerName => typeof f?.name === 'string' && Number.isSafeInteger(f?.until)).slice(-MAX_FORMER_NAMES);
}

/** `former` with `name` ended at `at` (a rename). */
export function withFormer(former: readonly FormerName[], name: string, at: number): FormerName[] {
  return [...former, { name, until: at }].slice(-MAX_FORMER_NAMES);
}

interface Holder { name: string; created_at: number; former: readonly FormerName[] }

/**
 * The user that was named `name` at `since` (unix seconds): the one of that name made by then,
 * else the one that had it then and was renamed since (the earliest such rename), else none.
 */
export function holderAt<U extends Holder>(users: readonly U[], name: string, since: number): U | undefined {
  let best: U | undefined;
  let until = Infinity;
  for (const u of users) {
    if (u.created_at > since) continue;
    if (u.name === name) return u;
    for (const f of u.former) {
      if (f.name === name && f.until >= since && f.until < until) {
        best = u;
        until = f.until;
      }
    }
  }
  return best;
}
