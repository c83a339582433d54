import { Bool, ConfigErrorList, describe, Int, Str, Type, type ConfigErrors, type Static } from '../../sdk/index.ts';

/** `storage.memory` of the configuration, owned by this plugin (its schema lived in the SDK before 3.0.0). */
export const MemoryStorageConfig = describe(Type.Object({
  auth: Type.Object({ enable: Bool(true), username: Str('admin'), password: Str('') }, { default: {} }),
  max_size_mbytes: Int(0),
  purge: Bool(false),
}, { default: {} }), {
  'auth.enable': 'Require Basic auth for PUT/DELETE on `/memfs`.',
  'auth.username': 'Basic auth user for `/memfs` writes.',
  'auth.password': 'Basic auth password for `/memfs` writes (generated on first start).',
  max_size_mbytes: 'Capacity of the memory filesystem in MiB (0 = unlimited); writes beyond get 507.',
  purge: 'When full, drop the oldest files instead of refusing writes.',
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
