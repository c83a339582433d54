import { ConfigErrorList, DiskStorageConfig, type ConfigErrors } from '../../sdk/index.ts';

/** The plugin's settings: `storage.disk` of the configuration (dir, max_size_mbytes, cache). */
export const DiskFsConfig = DiskStorageConfig;
export type DiskFsConfig = DiskStorageConfig;

/** Rules a schema cannot state; keys relative to `storage.disk`. */
export function validateDiskFs(s: DiskFsConfig): ConfigErrors {
  const errs = new ConfigErrorList();
  if (!s.dir.trim()) errs.add('dir', 'must not be empty');
  if (s.max_size_mbytes < 0) errs.add('max_size_mbytes', 'must not be negative');
  if (s.cache.ttl_seconds < 0) errs.add('cache.ttl_seconds', 'must not be negative');
  return errs.map;
}
