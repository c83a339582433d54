import { Type, type Static } from '@sinclair/typebox';
import { LogConfig, DbConfig, HostConfig, ApiConfig, TlsConfig, StorageConfig } from './sections-a.ts';
import { EncoderConfig, ResourcesConfig, DebugConfig, ServiceConfig, RouterConfig, PluginEntry } from './sections-b.ts';
import { HttpConfig } from './sections-http.ts';
import { Formatted } from './formats.ts';

// what a plugin names (builders, the sections it shares); the kernel's own section schemas and
// their types are imported by the core from their files
export { Str, Bool, Int, Port, List, IdpTenant, IdpConfig, ApiAuthConfig, DiskStorageConfig, S3StorageConfig } from './sections-a.ts';
export { PluginEntry } from './sections-b.ts';

/**
 * The kernel's sections of the configuration (layout version 3 of the reference, section 6.2, plus
 * `plugins`): the keys the core and the process engine own and a plugin may name in `reads`. The
 * sections of the plugins (`rtmp`, `srt`, `storage.memory`, `events`, ...) are each plugin's own
 * schema (`configSchema` in its folder, at its `configKey`); the core composes the whole
 * configuration from these and them (app/config-data.ts, generated, the composition package's). The SDK names no plugin:
 * - core: version, id, name, address, created_at, update_check, log, db, host, api (api.auth is
 *   checked by the `auth` plugin, api.auth.idp by `idp-login`: the front door reads both), tls,
 *   storage (storage.disk is checked by `disk-fs`: the kernel and the engine read its folder),
 *   debug, http, service, router, plugins;
 * - process engine: encoder (alias ffmpeg; core/process/config-schema.ts) and resources (the
 *   resource budget of its starts, the reference successor's section; bounds in the schema).
 * `encoder` and `ffmpeg` hold the same settings (the loader keeps them identical).
 */
export const KernelConfig = Type.Object({
  version: Type.Integer({ default: 3 }),
  id: Type.String({ default: '', description: 'Unique id of this instance (generated on first start).' }),
  name: Type.String({ default: '', description: 'Human-readable name of this instance (generated on first start).' }),
  address: Formatted('listen-address', ':8080', { description: 'HTTP listen address, host:port (`:8080` = every interface).' }),
  created_at: Type.String({ default: '' }),
  update_check: Type.Boolean({ default: true, description: 'Kept for compatibility; this build never calls home.' }),
  log: LogConfig,
  db: DbConfig,
  host: HostConfig,
  api: ApiConfig,
  tls: TlsConfig,
  storage: StorageConfig,
  encoder: EncoderConfig,
  ffmpeg: EncoderConfig,
  resources: ResourcesConfig,
  debug: DebugConfig,
  http: HttpConfig,
  service: ServiceConfig,
  router: RouterConfig,
  plugins: Type.Array(PluginEntry, { default: ['*'] }),
});
export type KernelConfig = Static<typeof KernelConfig>;
