import { Type, type Static } from '@sinclair/typebox';
import { Str, Bool, Int, List, AllowBlock } from './sections-a.ts';
import { describe } from './describe.ts';

/* Config sections of the interface's ConfigData (reference section 6.2), part two. */

export const RtmpConfig = describe(Type.Object({
  enable: Bool(false),
  enable_tls: Bool(false),
  address: Str(':1935'),
  address_tls: Str(':1936'),
  app: Str('/'),
  token: Str(''),
  handshake_timeout_seconds: Type.Integer({ default: 10, minimum: 1, maximum: 3600 }),
  idle_timeout_seconds: Type.Integer({ default: 30, minimum: 1, maximum: 3600 }),
  max_connections: Type.Integer({ default: 1000, minimum: 1 }),
  max_connections_per_address: Type.Integer({ default: 100, minimum: 1 }),
  max_message_size_kbytes: Type.Integer({ default: 8192, minimum: 64, maximum: 16384 }),
}, { default: {} }), {
  enable: 'Run the RTMP server (plugin `rtmp`).',
  enable_tls: 'Run RTMPS too (needs tls.enable).',
  address: 'RTMP listen address.',
  address_tls: 'RTMPS listen address.',
  app: 'RTMP app path streams are published under.',
  token: 'Token publishers and players must give.',
  handshake_timeout_seconds: 'Seconds an RTMP connection has from accept to a started publish or play (handshake, connect, publish/play); then it is closed. RTMPS has as long again for its TLS handshake first.',
  idle_timeout_seconds: 'Seconds without a byte in either direction before an RTMP(S) connection is closed (publishing, playing or not yet either).',
  max_connections: 'Most RTMP and RTMPS connections open at once; more are closed at accept.',
  max_connections_per_address: 'Most RTMP and RTMPS connections open at once from one client address (IPv6: one /64); more are closed at accept. The service\'s own address (127.0.0.1, ::1: its processes) counts only toward the total.',
  max_message_size_kbytes: 'Largest RTMP audio or video message in KiB (a keyframe); a connection that announces a larger one is closed. Bounds what one connection can make the server buffer (twice this).',
});
export type RtmpConfig = Static<typeof RtmpConfig>;

export const SrtConfig = describe(Type.Object({
  enable: Bool(false),
  address: Str(':6000'),
  passphrase: Str(''),
  token: Str(''),
  log: Type.Object({ enable: Bool(false), topics: List() }, { default: {} }),
  handshake_timeout_seconds: Type.Integer({ default: 5, minimum: 1, maximum: 3600 }),
  idle_timeout_seconds: Type.Integer({ default: 10, minimum: 1, maximum: 3600 }),
  // libsrt keeps about 0.65 MiB per accepted connection (its buffers) and does not give it back
  max_connections: Type.Integer({ default: 300, minimum: 1 }),
  max_connections_per_address: Type.Integer({ default: 20, minimum: 1 }),
  fail_delay_ms: Type.Integer({ default: 1000, minimum: 0, maximum: 3_600_000 }),
  fail_delay_max_ms: Type.Integer({ default: 30_000, minimum: 0, maximum: 86_400_000 }),
}, { default: {} }), {
  enable: 'Run the SRT server (plugin `srt`).',
  address: 'SRT listen address (UDP).',
  passphrase: 'SRT encryption passphrase.',
  token: 'Token publishers and players must give.',
  handshake_timeout_seconds: 'Seconds an accepted SRT connection has to be admitted by the ingest hooks and, when it publishes, to send its first media; then it is closed.',
  idle_timeout_seconds: 'Seconds of silence from an SRT peer (not even keep-alives) before its connection is broken; a publisher that sends no media for as long is closed too.',
  max_connections: 'Most SRT connections open at once; more are refused in the handshake (reject 1402). Each costs libsrt about 0.65 MiB, kept for reuse: 300 is about 200 MiB in the SRT host process.',
  max_connections_per_address: 'Most SRT connections open at once from one client address (IPv6: one /64); more are refused in the handshake (reject 1402). The service\'s own address (127.0.0.1, ::1: its processes) counts only toward the total.',
  fail_delay_ms: 'After a wrong SRT token or passphrase, the client address is refused (reject 1402) for this long, doubling with each further failure (0 = never). The service\'s own address is never locked out.',
  fail_delay_max_ms: 'Longest lockout of a client address after repeated wrong SRT tokens or passphrases.',
  'log.enable': 'Log SRT events.',
  'log.topics': 'SRT log topics.',
});
export type SrtConfig = Static<typeof SrtConfig>;

export const EncoderConfig = describe(Type.Object({
  binary: Str('ffmpeg'),
  max_processes: Int(0),
  access: Type.Object({ input: AllowBlock(), output: AllowBlock() }, { default: {} }),
  // each process keeps a ring of max_lines allocated at its start
  log: Type.Object({ max_lines: Type.Integer({ default: 50, maximum: 100_000 }), max_history: Int(3) }, { default: {} }),
  confinement: Type.Object({ require: Bool(false), writable: List() }, { default: {} }),
}, { default: {} }), {
  binary: 'The media program (alias section `ffmpeg`). Set in the config file or the environment only: `PUT /api/v3/config` cannot change it.',
  max_processes: 'Most processes running at once (0 = unlimited).',
  'access.input.allow': 'Regular expressions an input address must match one of (empty = any).',
  'access.input.block': 'Regular expressions no input address may match.',
  'access.output.allow': 'Regular expressions an output address must match one of (empty = any).',
  'access.output.block': 'Regular expressions no output address may match.',
  'log.max_lines': 'Log lines kept per process (at most 100000).',
  'log.max_history': 'Past runs kept in each process report.',
  'confinement.require': 'Refuse to run any child (processes, probes, skills, playout) when the kernel offers no confinement (Landlock); by default they then run unconfined and the start-up banner says so. Config file or environment only.',
  'confinement.writable': 'Folders (or device files) children may write besides the disk filesystem\'s root and their private temporary folder, e.g. a recordings folder. Config file or environment only.',
});
export type EncoderConfig = Static<typeof EncoderConfig>;

export const PlayoutConfig = describe(Type.Object({
  enable: Bool(false),
  min_port: Type.Integer({ default: 0, minimum: 0, maximum: 65535 }),
  max_port: Type.Integer({ default: 0, minimum: 0, maximum: 65535 }),
}, { default: {} }), {
  enable: 'Read `playout:` process inputs through a relay that keeps them continuous (plugin `playout`).',
  min_port: 'Lowest loopback TCP port of the playout relays (one per `playout:` input of a running process).',
  max_port: 'Highest loopback TCP port of the playout relays.',
});
export type PlayoutConfig = Static<typeof PlayoutConfig>;

export const DebugConfig = describe(Type.Object({
  profiling: Bool(false),
  force_gc: Type.Integer({ default: 0, minimum: 0 }),
  memory_limit_mbytes: Type.Integer({ default: 0, minimum: 0 }),
}, { default: {} }), {
  profiling: 'Serve `/profiling` (heap snapshot and CPU profile).',
  force_gc: 'Seconds between forced garbage collections (0 = never).',
  memory_limit_mbytes: 'Memory limit in MiB (0 = none): the JavaScript heap is capped at this minus 64 (at least 64; `--max-old-space-size`), '
    + 'applied when the service starts (it relaunches itself in place), not by a reload.',
});

export const MetricsConfig = describe(Type.Object({
  enable: Bool(false),
  enable_prometheus: Bool(false),
  // the history holds range_sec / interval_sec samples per series; the sampling timer takes interval_sec
  range_sec: Type.Integer({ default: 300, maximum: 604_800 }),
  interval_sec: Type.Integer({ default: 2, maximum: 86_400 }),
}, { default: {} }), {
  enable: 'Keep a sampled history of the metrics (plugin `metrics`); current values answer either way.',
  enable_prometheus: 'Serve `/metrics` in the Prometheus text format.',
  range_sec: 'Seconds of metrics kept (at most a week, 604800).',
  interval_sec: 'Seconds between metric samples (at most a day, 86400).',
});
export type MetricsConfig = Static<typeof MetricsConfig>;

export const SessionsConfig = describe(Type.Object({
  enable: Bool(true),
  ip_ignorelist: List(['127.0.0.1/32', '::1/128']),
  session_timeout_sec: Int(30),
  persist: Bool(false),
  // a timer: node runs a longer one at once, every millisecond
  persist_interval_sec: Type.Integer({ default: 300, maximum: 2_147_483 }),
  max_bitrate_mbit: Int(0),
  max_sessions: Int(0),
}, { default: {} }), {
  enable: 'Track viewer and publisher sessions (plugin `sessions`).',
  ip_ignorelist: 'CIDRs whose sessions are not counted.',
  session_timeout_sec: 'Seconds without traffic after which a session ends.',
  persist: 'Keep session totals across restarts.',
  persist_interval_sec: 'Seconds between writes of session totals (0 = only at stop).',
  max_bitrate_mbit: 'Refuse new sessions above this total bitrate (0 = unlimited).',
  max_sessions: 'Refuse new sessions above this count (0 = unlimited).',
});
export type SessionsConfig = Static<typeof SessionsConfig>;

export const ServiceConfig = describe(Type.Object({
  enable: Bool(false),
  token: Str(''),
  url: Str('https://service.datarhei.com'),
}, { default: {} }), {
  enable: 'Connect to a monitoring service (not supported by this build).',
  token: 'Token for the monitoring service.',
  url: 'URL of the monitoring service.',
});

export const RouterConfig = describe(Type.Object({
  blocked_prefixes: List(['/api']),
  routes: Type.Record(Type.String(), Type.String(), { default: {} }),
  ui_path: Str(''),
}, { default: {} }), {
  blocked_prefixes: 'Path prefixes custom routes may not use.',
  routes: 'Custom routes, from -> to (env: space-separated `from:to`).',
  ui_path: 'Folder of a static UI served at `/ui`.',
});

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
