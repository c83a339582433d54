import { Bool, ConfigErrorList, type ConfigErrors, Int, section, type Static, Str } from '../../sdk/index.ts';

/** `storage.memory` of the configuration, owned by this plugin (its schema lived in the SDK before 3.0.0). */
export const MemoryStorageConfig = section({
  auth: section({
    enable: [Bool(true), 'Require Basic auth for PUT/DELETE on `/memfs`.'],
    username: [Str('admin'), 'Basic auth user for `/memfs` writes.'],
    password: [Str(''), 'Basic auth password for `/memfs` writes (generated on first start).'],
  }),
  max_size_mbytes: [Int(0), 'Capacity of the memory filesystem in MiB (0 = unlimited); writes beyond get 507.'],
  purge: [Bool(false), 'When full, drop the oldest files instead of refusing writes.'],
});
export type MemoryStorageConfig = Static<typeof MemoryStorageConfig>;

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
