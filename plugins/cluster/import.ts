import type { KV } from 'nats';
import { isConflict, isWrongRevision } from './errors.ts';
import { encodeId } from './keys.ts';

export interface ImportResult {
  /** 'imported': this call imported; 'done': an earlier import of this node finished already. */
  status: 'imported' | 'done';
  /** Ids this call added. */
  added: string[];
  /** Ids that existed in the cluster already and were kept as they were. */
  kept: string[];
}

/** The marker of node `node`'s import in `core_processes` or `core_users` (never an encoded key: no `p.`, `u.`). */
export function importMarker(node: string): string {
  return `import.${encodeId(node)}`;
}

/**
 * Imports a node's own processes (its db.json, when it switches into a cluster) exactly once.
 * The marker `import.<node>` is claimed with `create` ('importing'), then set to 'done': a node
 * that restarts (or a second call racing this one) finds the marker and imports nothing more,
 * so a process deleted in the cluster later is never resurrected from an old db.json. Each
 * process is added with `create`: an id the cluster has already (another node imported or
 * created it) is kept, never overwritten, so nodes importing the same ids at once store each once.
 * A claim left 'importing' by a crash is resumed by the same node (every step is idempotent).
 * The same for IAM's users (users.json into `core_users`, `idOf` their name).
 */
export async function importOnce<T>(
  kv: KV, store: { create(x: T): Promise<unknown> }, node: string, processes: readonly T[], idOf: (x: T) => string = (x) => (x as { id: string }).id,
): Promise<ImportResult> {
  const key = importMarker(node);
  const claim = JSON.stringify({ node, state: 'importing', at: new Date().toISOString() });
  let rev: number;
  try {
    rev = await kv.create(key, claim);
  } catch (err) {
    if (!isWrongRevision(err)) throw err;
    const e = await kv.get(key);
    const state = e?.operation === 'PUT' ? e.json<{ state?: string }>().state : undefined;
    // 'done', or another call of this node importing right now: either way, not twice
    if (!e || state !== 'importing' || claimedRecently(e.created)) return { status: 'done', added: [], kept: [] };
    rev = e.revision;
  }
  const result: ImportResult = { status: 'imported', added: [], kept: [] };
  for (const p of processes) {
    try {
      await store.create(p);
      result.added.push(idOf(p));
    } catch (err) {
      if (!isConflict(err)) throw err;
      result.kept.push(idOf(p));
    }
  }
  try {
    await kv.update(key, JSON.stringify({ node, state: 'done', at: new Date().toISOString(), count: processes.length }), rev);
  } catch (err) {
    // a resumed claim racing the original: the other call finishes the marker
    if (!isWrongRevision(err)) throw err;
  }
  return result;
}

/** A claim younger than a minute belongs to a call still running, not to a crashed one. */
function claimedRecently(created: Date): boolean {
  return Date.now() - created.getTime() < 60_000;
}
