import { DiskStorageConfig } from '../../sdk/index.ts';

/** The plugin's settings: `storage.disk` of the configuration (dir, max_size_mbytes, cache). */
export const DiskFsConfig = DiskStorageConfig;
export type DiskFsConfig = DiskStorageConfig;
