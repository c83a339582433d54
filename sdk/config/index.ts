import { Type, type Static } from '@sinclair/typebox';
import { LogConfig, DbConfig, HostConfig, ApiConfig, TlsConfig, StorageConfig } from './sections-a.ts';
import {
  RtmpConfig, SrtConfig, EncoderConfig, PlayoutConfig, DebugConfig, MetricsConfig, SessionsConfig,
  ServiceConfig, RouterConfig, PluginEntry,
} from './sections-b.ts';
import { EventsConfig } from './sections-events.ts';
import { HttpConfig } from './sections-http.ts';

export * from './sections-a.ts';
export * from './sections-b.ts';
export * from './sections-events.ts';
export * from './sections-http.ts';
export * from './known-sections.ts';

/** The names of the built-in plugins; `"*"` in `plugins` (the default) loads all of this build's. */
export const BUILTIN_PLUGINS = [
  'auth', 'idp-login', 'disk-fs', 'memfs', 'rtmp', 'srt', 'sessions', 'metrics', 'playout', 'widget', 'graphql', 'events',
] as const;

/**
 * Built-ins that `"*"` leaves out: they load only when `plugins` names them. `cluster` joins the
 * node to other nodes over NATS, which a single-node deployment must never do by accident.
 */
export const OPT_IN_PLUGINS: readonly string[] = ['cluster'];

/**
 * The complete configuration, layout version 3 (reference section 6.2), plus `plugins`, composed
 * from the core's own keys and the sections the built-ins contribute. Every section's schema is
 * here so that ConfigData (and `reads`) are typed and `GET /api/v3/config` shows every key
 * whatever is loaded; the rules of a section live with its owner (see core/config/README.md):
 * - core: version, id, name, address, created_at, update_check, log, db, host, api (except
 *   api.auth), tls, storage.mimetypes_file, storage.cors, debug, http, service, router, plugins;
 * - auth: api.auth; idp-login: api.auth.idp (alias api.auth.auth0); disk-fs: storage.disk;
 *   memfs: storage.memory; process engine: encoder (alias ffmpeg; core/process/config-schema.ts);
 * - rtmp, srt, metrics, sessions, playout: their plugins (known-sections.ts holds the rules of a
 *   section whose plugin is not built yet; none now).
 * - events: the `events` section (not in the reference: its event stream and webhooks).
 * `encoder` and `ffmpeg` hold the same settings (the loader keeps them identical).
 */
export const ConfigData = Type.Object({
  version: Type.Integer({ default: 3 }),
  id: Type.String({ default: '', description: 'Unique id of this instance (generated on first start).' }),
  name: Type.String({ default: '', description: 'Human-readable name of this instance (generated on first start).' }),
  address: Type.String({ default: ':8080', description: 'HTTP listen address, host:port (`:8080` = every interface).' }),
  created_at: Type.String({ default: '' }),
  update_check: Type.Boolean({ default: true, description: 'Kept for compatibility; this build never calls home.' }),
  log: LogConfig,
  db: DbConfig,
  host: HostConfig,
  api: ApiConfig,
  tls: TlsConfig,
  storage: StorageConfig,
  rtmp: RtmpConfig,
  srt: SrtConfig,
  encoder: EncoderConfig,
  ffmpeg: EncoderConfig,
  playout: PlayoutConfig,
  debug: DebugConfig,
  metrics: MetricsConfig,
  sessions: SessionsConfig,
  events: EventsConfig,
  http: HttpConfig,
  service: ServiceConfig,
  router: RouterConfig,
  plugins: Type.Array(PluginEntry, { default: ['*'] }),
});
export type ConfigData = Static<typeof ConfigData>;
