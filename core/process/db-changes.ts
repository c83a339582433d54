import { own, type DbData, type StoredProcess } from './db-document.ts';

/**
 * Changes of db.json's data for `StateDocument.commit`: each applies one change and returns
 * its undo, so a change whose write fails leaves memory as it is on disk.
 */

/** Puts a stored process in place (a new one or a replaced one keeping its id). */
export function putStored(data: DbData, sp: StoredProcess): () => void {
  const stored = data.process;
  const old = own(stored, sp.id);
  stored[sp.id] = sp;
  return () => {
    if (old === undefined) delete stored[sp.id];
    else stored[sp.id] = old;
  };
}

/** A process replaced under a new id or the same one: its metadata follows the id. */
export function replaceStored(data: DbData, id: string, sp: StoredProcess): () => void {
  if (sp.id === id) return putStored(data, sp);
  const { process: stored, metadata: { process: meta } } = data;
  const was = { sp: own(stored, id), meta: own(meta, id), newMeta: own(meta, sp.id) };
  meta[sp.id] = was.meta ?? null;
  delete meta[id];
  delete stored[id];
  const undoPut = putStored(data, sp);
  return () => {
    undoPut();
    if (was.newMeta === undefined) delete meta[sp.id];
    else meta[sp.id] = was.newMeta;
    if (was.meta !== undefined) meta[id] = was.meta;
    if (was.sp !== undefined) stored[id] = was.sp;
  };
}

/** A new process: its stored form and an empty metadata entry. */
export function addStored(data: DbData, sp: StoredProcess): () => void {
  const meta = data.metadata.process;
  const hadMeta = own(meta, sp.id) !== undefined;
  if (!hadMeta) meta[sp.id] = null;
  const undoPut = putStored(data, sp);
  return () => {
    undoPut();
    if (!hadMeta) delete meta[sp.id];
  };
}

/** A deleted process: its stored form and its metadata. */
export function removeStored(data: DbData, id: string): () => void {
  const { process: stored, metadata: { process: meta } } = data;
  const was = { sp: own(stored, id), meta: own(meta, id) };
  delete stored[id];
  delete meta[id];
  return () => {
    if (was.sp !== undefined) stored[id] = was.sp;
    if (was.meta !== undefined) meta[id] = was.meta;
  };
}
