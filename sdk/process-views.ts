import type { ProcessStreamProgress } from './process.ts';

/*
 * The process API's objects as `GET /api/v3/process...` sends them (reference 5.3-5.8, wire
 * names), for plugins that show processes another way (GraphQL). The engine's TypeBox schemas
 * (core/process/schema.ts) are the source of truth; these are their read-only TypeScript faces.
 * Objects handed out are shared caches: read them, never change them.
 */

/** One input or output of a process config (reference 5.4); `cleanup` on outputs only. */
interface ApiProcessConfigIO {
  readonly id: string;
  readonly address: string;
  readonly options: readonly string[];
  readonly cleanup?: readonly unknown[];
}

/** ProcessConfig as returned (reference 5.4): every field filled. */
export interface ApiProcessConfig {
  readonly id: string;
  readonly type: string;
  readonly reference: string;
  readonly input: readonly ApiProcessConfigIO[];
  readonly output: readonly ApiProcessConfigIO[];
  readonly options: readonly string[];
  readonly reconnect: boolean;
  readonly reconnect_delay_seconds: number;
  readonly autostart: boolean;
  readonly stale_timeout_seconds: number;
  readonly limits: { readonly cpu_usage: number; readonly memory_mbytes: number; readonly waitfor_seconds: number };
  /** A 5-field cron expression (UTC) or an RFC 3339 time; absent when not scheduled. */
  readonly scheduler?: string;
  /** Seconds a run lasts at most; absent when unlimited. */
  readonly runtime_duration_seconds?: number;
  /** Runs only while read (absent when off); `idle_seconds` 0 = `encoder.ondemand.idle_seconds`. */
  readonly ondemand?: { readonly enable: boolean; readonly idle_seconds: number };
}

/** One side of an avstream (reference 5.6). */
interface ApiAVstreamIO {
  readonly state: string;
  readonly packet: number;
  readonly time: number;
  readonly size_kb: number;
}

/** The playout figures of one input stream (reference 5.6 `AVstream`). */
export interface ApiAVstream {
  readonly input: ApiAVstreamIO;
  readonly output: ApiAVstreamIO;
  readonly aqueue: number;
  readonly queue: number;
  readonly dup: number;
  readonly drop: number;
  readonly enc: number;
  readonly looping: boolean;
  readonly duplicating: boolean;
  readonly gop: string;
}

/**
 * One stream of the current run (reference 5.6 `ProgressIO`): the fields the engine's progress
 * has (`ProcessStreamProgress`) and the rest; optional fields are absent when empty.
 */
export interface ApiProgressIO extends ProcessStreamProgress {
  readonly format: string;
  readonly codec: string;
  readonly coder: string;
  readonly pix_fmt?: string;
  readonly width?: number;
  readonly height?: number;
  readonly sampling_hz?: number;
  readonly layout?: string;
  readonly channels?: number;
  readonly avstream: ApiAVstream | null;
}

/** Progress (reference 5.6). */
export interface ApiProgress {
  readonly inputs: readonly ApiProgressIO[];
  readonly outputs: readonly ApiProgressIO[];
  readonly frame: number;
  readonly packet: number;
  readonly fps: number;
  readonly q: number;
  readonly size_kb: number;
  readonly time: number;
  readonly bitrate_kbit: number;
  readonly speed: number;
  readonly drop: number;
  readonly dup: number;
}

/** ProcessState (reference 5.6). */
export interface ApiProcessState {
  readonly order: string;
  readonly exec: string;
  readonly runtime_seconds: number;
  readonly reconnect_seconds: number;
  readonly last_logline: string;
  readonly progress: ApiProgress;
  readonly memory_bytes: number;
  readonly cpu_usage: number;
  readonly command: readonly string[] | null;
  /** The next start of a scheduled process with order `start` (RFC 3339, UTC). */
  readonly next_run?: string;
  /** Why an on-demand process runs or waits (absent for other processes). */
  readonly ondemand?: ApiDemandState;
}

/** The demand state of an on-demand process (`state.ondemand`). */
interface ApiDemandState {
  /** True while it waits for a reader (order `start`, not running for demand). */
  readonly waiting: boolean;
  /** Readers now: HLS viewers seen within the idle time plus stream readers. */
  readonly readers: number;
  /** What started the current run (`hls`, `stream`); absent while waiting. */
  readonly started_by?: string;
  /** When it stops if no reader comes back (RFC 3339, UTC); absent while waiting or read. */
  readonly stop_at?: string;
  /** Seconds it runs on after its last reader left. */
  readonly idle_seconds: number;
}

/** A run's log: `["<unix seconds>", "<line>"]` pairs (reference 5.7). */
export type ApiReportLog = readonly (readonly [string, string])[];

/** ProcessReport (reference 5.7). */
export interface ApiProcessReport {
  readonly created_at: number;
  readonly prelude: readonly string[];
  readonly log: ApiReportLog;
  readonly history: readonly { readonly created_at: number; readonly prelude: readonly string[]; readonly log: ApiReportLog }[];
}

/** Process (reference 5.3): the parts a filter left out are absent. */
export interface ApiProcess {
  readonly id: string;
  readonly type: string;
  readonly reference: string;
  readonly created_at: number;
  readonly updated_at: number;
  readonly config?: ApiProcessConfig;
  readonly state?: ApiProcessState;
  readonly report?: ApiProcessReport;
  /** An object, or null when the process has no metadata. */
  readonly metadata?: Readonly<Record<string, unknown>> | null;
}

/** One stream a probe found (reference 5.8 `ProbeIO`). */
interface ApiProbeIO {
  readonly url: string;
  readonly format: string;
  readonly index: number;
  readonly stream: number;
  readonly language: string;
  readonly type: string;
  readonly codec: string;
  readonly coder: string;
  readonly bitrate_kbps: number;
  readonly duration_sec: number;
  readonly fps: number;
  readonly pix_fmt: string;
  readonly width: number;
  readonly height: number;
  readonly sampling_hz: number;
  readonly layout: string;
  readonly channels: number;
}

/** Probe (reference 5.8). */
export interface ApiProbe {
  readonly streams: readonly ApiProbeIO[];
  readonly log: readonly string[];
}
