import { MemoryStorageConfig } from '../../sdk/index.ts';

/** The plugin's settings: `storage.memory` of the configuration (auth, max_size_mbytes, purge). */
export const MemfsConfig = MemoryStorageConfig;
export type MemfsConfig = MemoryStorageConfig;
