import type { ProcessPreSave, ProcessRecord } from '../../sdk/index.ts';
import type { FullConfig } from './config-model.ts';
import type { StoredProcess } from './db-document.ts';

/** Plugins' last word on an add or update, before it is saved: a reason refuses it (400). */
export type PreSave = (event: ProcessPreSave) => Promise<string | undefined>;

/** What `preSave` taps see of a config about to be saved. */
export function preSaveEvent(c: FullConfig, previousId?: string): ProcessPreSave {
  const io = (list: FullConfig['input']) => list.map(({ id, address, options }) => ({ id, address, options }));
  return { id: c.id, previousId, reference: c.reference, inputs: io(c.input), outputs: io(c.output) };
}

/** A stored process and its metadata as the replication shares it. */
export function recordOf(sp: StoredProcess, metadata: Record<string, unknown> | null): ProcessRecord {
  return {
    id: sp.id, reference: sp.reference, order: sp.order, config: sp.config, metadata,
    created_at: sp.created_at, updated_at: sp.updated_at, ...(sp.maker === undefined ? {} : { maker: sp.maker }),
    ...(sp.maker_since === undefined ? {} : { maker_since: sp.maker_since }),
  };
}
