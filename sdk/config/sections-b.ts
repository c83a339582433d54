import { Type, type Static } from '@sinclair/typebox';
import { Str, Bool, Int, List, AllowBlock } from './sections-a.ts';

/* Config sections of the interface's ConfigData (reference section 6.2), part two. */

export const RtmpConfig = Type.Object({
  enable: Bool(false),
  enable_tls: Bool(false),
  address: Str(':1935'),
  address_tls: Str(':1936'),
  app: Str('/'),
  token: Str(''),
}, { default: {} });
export type RtmpConfig = Static<typeof RtmpConfig>;

export const SrtConfig = Type.Object({
  enable: Bool(false),
  address: Str(':6000'),
  passphrase: Str(''),
  token: Str(''),
  log: Type.Object({ enable: Bool(false), topics: List() }, { default: {} }),
}, { default: {} });
export type SrtConfig = Static<typeof SrtConfig>;

export const EncoderConfig = Type.Object({
  binary: Str('ffmpeg'),
  max_processes: Int(0),
  access: Type.Object({ input: AllowBlock(), output: AllowBlock() }, { default: {} }),
  log: Type.Object({ max_lines: Int(50), max_history: Int(3) }, { default: {} }),
}, { default: {} });
export type EncoderConfig = Static<typeof EncoderConfig>;

export const PlayoutConfig = Type.Object({
  enable: Bool(false),
  min_port: Type.Integer({ default: 0, minimum: 0, maximum: 65535 }),
  max_port: Type.Integer({ default: 0, minimum: 0, maximum: 65535 }),
}, { default: {} });
export type PlayoutConfig = Static<typeof PlayoutConfig>;

export const DebugConfig = Type.Object({
  profiling: Bool(false),
  force_gc: Int(0),
  memory_limit_mbytes: Int(0),
}, { default: {} });

export const MetricsConfig = Type.Object({
  enable: Bool(false),
  enable_prometheus: Bool(false),
  range_sec: Int(300),
  interval_sec: Int(2),
}, { default: {} });
export type MetricsConfig = Static<typeof MetricsConfig>;

export const SessionsConfig = Type.Object({
  enable: Bool(true),
  ip_ignorelist: List(['127.0.0.1/32', '::1/128']),
  session_timeout_sec: Int(30),
  persist: Bool(false),
  persist_interval_sec: Int(300),
  max_bitrate_mbit: Int(0),
  max_sessions: Int(0),
}, { default: {} });
export type SessionsConfig = Static<typeof SessionsConfig>;

export const ServiceConfig = Type.Object({
  enable: Bool(false),
  token: Str(''),
  url: Str('https://service.datarhei.com'),
}, { default: {} });

export const RouterConfig = Type.Object({
  blocked_prefixes: List(['/api']),
  routes: Type.Record(Type.String(), Type.String(), { default: {} }),
  ui_path: Str(''),
}, { default: {} });

/** One entry of the `plugins` key: a built-in name, a module path, or either with settings. */
export const PluginEntry = Type.Union([
  Type.String({ minLength: 1 }),
  Type.Object({
    name: Type.Optional(Type.String({ minLength: 1 })),
    module: Type.Optional(Type.String({ minLength: 1 })),
    config: Type.Optional(Type.Unknown()),
  }),
]);
export type PluginEntry = Static<typeof PluginEntry>;
