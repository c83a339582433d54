import { ConfigErrorList, MemoryStorageConfig, type ConfigErrors } from '../../sdk/index.ts';

/** The plugin's settings: `storage.memory` of the configuration (auth, max_size_mbytes, purge). */
export const MemfsConfig = MemoryStorageConfig;
export type MemfsConfig = MemoryStorageConfig;

/** Rules a schema cannot state; keys relative to `storage.memory`. */
export function validateMemfs(s: MemfsConfig): ConfigErrors {
  const errs = new ConfigErrorList();
  if (s.auth.enable && (!s.auth.username || !s.auth.password)) errs.add('auth.enable', 'username and password must be set when memfs auth is enabled');
  if (s.max_size_mbytes < 0) errs.add('max_size_mbytes', 'must not be negative');
  return errs.map;
}
