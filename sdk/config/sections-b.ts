import { Type, type Static } from '@sinclair/typebox';
import { Str, Bool, Int, List, AllowBlock } from './sections-a.ts';
import { describe } from './describe.ts';
import { Formatted, MAX_TIMER_SECONDS } from './formats.ts';

/* The kernel's config sections of the interface's ConfigData (reference section 6.2), part two. */

export const EncoderConfig = describe(Type.Object({
  binary: Formatted('path', 'ffmpeg'),
  max_processes: Int(0),
  access: Type.Object({ input: AllowBlock(), output: AllowBlock() }, { default: {} }),
  // each process keeps a ring of max_lines allocated at its start
  log: Type.Object({ max_lines: Type.Integer({ default: 50, maximum: 100_000 }), max_history: Int(3) }, { default: {} }),
  confinement: Type.Object({
    require: Bool(false), writable: Type.Array(Formatted('path'), { default: [] }), modules: Formatted('path', ''),
    max_tasks: Type.Integer({ default: 1024, minimum: 0, maximum: 1_000_000 }),
  }, { default: {} }),
  ondemand: Type.Object({
    idle_seconds: Type.Integer({ default: 30, minimum: 1, maximum: 86_400 }),
    // what strangers may start (issue 43): a budget per client address and a total at once
    max_starts_per_client: Type.Integer({ default: 10, minimum: 0, maximum: 100_000 }),
    client_window_seconds: Type.Integer({ default: 60, minimum: 1, maximum: 86_400 }),
    max_running: Type.Integer({ default: 32, minimum: 0, maximum: 100_000 }),
  }, { default: {} }),
}, { default: {} }), {
  binary: 'The media program (alias section `ffmpeg`). Set in the config file or the environment only: `PUT /api/v3/config` cannot change it.',
  max_processes: 'Most processes running at once (0 = unlimited).',
  'access.input.allow': 'Regular expressions (RE2 syntax, as the reference\'s) an input address must match one of (empty = any).',
  'access.input.block': 'Regular expressions (RE2 syntax) no input address may match.',
  'access.output.allow': 'Regular expressions (RE2 syntax) an output address must match one of (empty = any).',
  'access.output.block': 'Regular expressions (RE2 syntax) no output address may match.',
  'log.max_lines': 'Log lines kept per process (at most 100000).',
  'log.max_history': 'Past runs kept in each process report.',
  'confinement.require': 'Refuse to run any child (processes, probes, skills, playout) when the kernel offers no confinement (Landlock); by default they then run unconfined and the start-up banner says so. Config file or environment only.',
  'ondemand.idle_seconds': 'Seconds an on-demand process (`ondemand.enable` in its config) runs on after its last reader left, unless its own `ondemand.idle_seconds` says otherwise.',
  'confinement.modules': 'A folder of audio/video effect modules (LADSPA, LV2, frei0r) the filters `ladspa`, `lv2`, `frei0r` and `frei0r_src` may load; empty (the default): those filters are refused with 400, as they load a library into the encoder. Config file or environment only.',
  'ondemand.max_starts_per_client': 'On-demand processes one client address (IPv6: its /64) may start within `client_window_seconds` (0 = no limit); '
    + 'over it, a request that would start one more gets 429 and a stream player is refused as for a missing stream. A reader of a process that already runs costs nothing.',
  'ondemand.client_window_seconds': 'The window of `max_starts_per_client`: a start counts against its client for this long.',
  'ondemand.max_running': 'On-demand processes started by demand that may run (or start) at once (0 = no limit of its own; `max_processes` still applies); '
    + 'over it, a request that would start one more gets 429.',
  'confinement.max_tasks': 'Threads and processes one child may have at once, all it starts counted (0 = no bound): beyond, its next thread or fork fails, '
    + 'as `-threads 100000` would otherwise take the machine (a service run as root is exempt from the user\'s process limit). '
    + 'Kept by a cgroup of the child\'s own with the pids controller (cgroup v1\'s `pids` hierarchy, or v2 where the service may give it to sub-cgroups); '
    + 'where there is none the start-up log says the bound is not kept. Config file or environment only.',
  'confinement.writable': 'Folders (or device files) children may write besides the disk filesystem\'s root and their private temporary folder, e.g. a recordings folder. Config file or environment only.',
});
export type EncoderConfig = Static<typeof EncoderConfig>;

/**
 * The service's resource budget (the names and meaning of the reference's successor, datarhei Core
 * v16.12+/v17: percent of the whole machine, 0 = no limit), enforced by the process engine when a
 * process would start (core/process/README.md, "Resource budget").
 */
export const ResourcesConfig = describe(Type.Object({
  max_cpu_usage: Type.Number({ default: 0, minimum: 0, maximum: 100 }),
  max_memory_usage: Type.Number({ default: 0, minimum: 0, maximum: 100 }),
  wait_seconds: Type.Integer({ default: 60, minimum: 0, maximum: 86_400 }),
}, { default: {} }), {
  max_cpu_usage: 'Most CPU the machine may be busy with, in percent of all its cores (0 = no limit), for a process to start: '
    + 'a start above it (counting the process\'s own `limits.cpu_usage`) waits or is refused.',
  max_memory_usage: 'Most memory the machine may use, in percent of its total (0 = no limit), for a process to start: '
    + 'a start above it (counting the process\'s own `limits.memory_mbytes`) waits or is refused.',
  wait_seconds: 'How long a start the engine makes itself (at boot, autostart, restart, reconnect, schedule) waits for the machine to be under '
    + '`max_cpu_usage` / `max_memory_usage` before it ends `failed` (then `reconnect` retries it); 0 = no wait. '
    + 'The `start` command is refused with 503 instead, and an on-demand start refuses its reader.',
});
export type ResourcesConfig = Static<typeof ResourcesConfig>;

export const DebugConfig = describe(Type.Object({
  profiling: Bool(false),
  force_gc: Type.Integer({ default: 0, minimum: 0, maximum: MAX_TIMER_SECONDS }),
  memory_limit_mbytes: Type.Integer({ default: 0, minimum: 0 }),
}, { default: {} }), {
  profiling: 'Serve `/profiling` (heap snapshot and CPU profile).',
  force_gc: 'Seconds between forced garbage collections (0 = never).',
  memory_limit_mbytes: 'Memory limit in MiB (0 = none): the JavaScript heap is capped at this minus 64 (at least 64; `--max-old-space-size`), '
    + 'applied when the service starts (it relaunches itself in place), not by a reload.',
});

export const ServiceConfig = describe(Type.Object({
  enable: Bool(false),
  token: Str(''),
  url: Formatted('http-url-or-empty', 'https://service.datarhei.com'),
}, { default: {} }), {
  enable: 'Connect to a monitoring service (not supported by this build).',
  token: 'Token for the monitoring service.',
  url: 'URL of the monitoring service.',
});

export const RouterConfig = describe(Type.Object({
  blocked_prefixes: List(['/api']),
  routes: Type.Record(Type.String(), Type.String(), { default: {} }),
  ui_path: Formatted('path', ''),
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
