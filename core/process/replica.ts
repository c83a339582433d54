import type { ProcessRecord } from '../../sdk/index.ts';
import { fromStoredConfig, toStoredConfig } from './config-model.ts';
import { own, type StoredProcess } from './db-document.ts';
import { putStored, removeStored } from './db-changes.ts';
import type { KeyedLock } from './keyed-lock.ts';
import type { ManagerOptions } from './manager.ts';
import { ProcessEntry } from './process-entry.ts';

/** The manager's parts a change made on another node touches (`ProcessManager.apply` and friends). */
export interface ReplicaPort {
  entries: Map<string, ProcessEntry>;
  ffversions: Map<string, string>;
  lock: KeyedLock;
  o: ManagerOptions;
  stored(e: ProcessEntry, ffversion?: string): StoredProcess;
  runs(id: string): boolean;
}

/**
 * A process added or changed on another node (or this node's own write coming back from the
 * shared store): kept here without writing it back. An unchanged config keeps the entry and its
 * run, so an echo changes nothing; a new config replaces the entry like a PUT does.
 */
export async function applyRecord(p: ReplicaPort, r: ProcessRecord): Promise<void> {
  await p.lock.run([r.id], async () => {
    const cur = p.entries.get(r.id);
    // the config as db.json holds it (no storable check: it was stored already)
    if (cur && cur.maker === r.maker && cur.makerSince === (r.maker_since ?? r.updated_at) && JSON.stringify(toStoredConfig(cur.config, p.ffversions.get(r.id) ?? '')) === JSON.stringify(r.config)) return follow(p, cur, r);
    const ffversion = typeof r.config.ffversion === 'string' ? r.config.ffversion : '';
    const c = fromStoredConfig({ ...r.config, id: r.id });
    const e = new ProcessEntry(c, { createdAt: r.created_at, updatedAt: r.updated_at, order: r.order, maker: r.maker, makerSince: r.maker_since }, p.o.entryEnv);
    const why = e.refresh();
    if (why !== undefined) p.o.log.warn({ process: r.id, reason: why }, 'shared process is invalid here');
    let sp: StoredProcess;
    try {
      sp = p.stored(e, ffversion);
      await save(p, sp, r.metadata);
    } catch (err) {
      void e.destroy();
      throw err;
    }
    if (cur) {
      await cur.destroy();
      await p.o.cleanup.unset(r.id, true);
      e.monitor.adoptHistory(cur.monitor);
    }
    p.entries.set(r.id, e);
    p.ffversions.set(r.id, ffversion);
    p.o.onReplicated?.(r.id);
    if (e.valid) p.o.cleanup.set(r.id, e.resolution!.cleanup);
    if (e.order === 'start' && e.valid && p.runs(r.id)) await e.start();
  });
}

/** Same config: only order and metadata follow; an echo of this node's own write is a no-op. */
async function follow(p: ReplicaPort, e: ProcessEntry, r: ProcessRecord): Promise<void> {
  const meta = own(p.o.db.data.metadata.process, r.id) ?? null;
  if (e.order === r.order && JSON.stringify(meta) === JSON.stringify(r.metadata ?? null)) return;
  const before = e.order;
  e.order = r.order;
  try {
    await save(p, p.stored(e), r.metadata);
  } catch (err) {
    e.order = before;
    throw err;
  }
  if (before === r.order) return;
  if (r.order === 'stop') return e.stop();
  if (!p.runs(r.id)) return undefined;
  if (!e.valid) {
    if (e.refresh() !== undefined) return undefined;
    p.o.cleanup.set(r.id, e.resolution!.cleanup);
  }
  return e.start();
}

/** db.json keeps a copy of the shared processes (a fresh object per change: its text cache is by identity). */
async function save(p: ReplicaPort, sp: StoredProcess, metadata: Record<string, unknown> | null): Promise<void> {
  const { data } = p.o.db;
  const all = data.metadata.process;
  await p.o.db.commit(() => {
    const before = own(all, sp.id);
    const undo = putStored(data, sp);
    all[sp.id] = metadata ? { ...metadata } : null;
    return () => {
      undo();
      if (before === undefined) delete all[sp.id];
      else all[sp.id] = before;
    };
  });
}

/** A process deleted on another node. */
export async function dropRecord(p: ReplicaPort, id: string): Promise<void> {
  await p.lock.run([id], async () => {
    const e = p.entries.get(id);
    if (!e) return;
    await p.o.db.commit(() => removeStored(p.o.db.data, id));
    await e.destroy();
    p.entries.delete(id);
    p.ffversions.delete(id);
    await p.o.cleanup.unset(id, true);
    await p.o.onDelete(id, e.config.reference);
  });
}

/**
 * Whether this node runs `id` changed. A stop does not wait for the process lock: a lost lease
 * must end the child now, even while an API write for it is stuck on the shared store.
 */
export async function rerun(p: ReplicaPort, id: string): Promise<void> {
  const now = p.entries.get(id);
  if (now && !p.runs(id)) return now.stop();
  await p.lock.run([id], async () => {
    const e = p.entries.get(id);
    if (!e) return;
    if (e.order !== 'start' || !p.runs(id)) return e.stop();
    if (!e.valid) {
      if (e.refresh() !== undefined) return undefined;
      p.o.cleanup.set(id, e.resolution!.cleanup);
    }
    return e.start();
  });
}
