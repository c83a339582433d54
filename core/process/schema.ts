import { Type, type Static, type TSchema } from '@sinclair/typebox';
import {
  ProbeSchema, ProcessReportSchema, ProgressIOSchema, ProgressSchema, SkillsSchema,
} from './parse/schemas.ts';

/*
 * The process API's shapes (reference 5.3-5.7). One schema per shape: body validation, the
 * TypeScript types and the OpenAPI document come from these. Responses are written by
 * json-write.ts (exact number rules of reference 2.4); tests check them against these schemas.
 */

const U64 = (o: object = {}) => Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, ...o });
/** Linux refuses single arguments longer than 128 KiB, so nothing longer can be run anyway. */
const Arg = (o: object = {}) => Type.String({ maxLength: 131071, ...o });
const Id = () => Type.String({ maxLength: 1024 });
const Args = () => Type.Array(Arg(), { maxItems: 4096 });

export const ProcessConfigIOCleanup = Type.Object({
  pattern: Type.String({ maxLength: 4096 }),
  max_files: Type.Optional(U64()),
  max_file_age_seconds: Type.Optional(U64()),
  purge_on_delete: Type.Optional(Type.Boolean()),
});
export type ProcessConfigIOCleanup = Static<typeof ProcessConfigIOCleanup>;

export const ProcessConfigIO = Type.Object({
  id: Type.Optional(Id()),
  address: Type.Optional(Arg()),
  options: Type.Optional(Args()),
  /** Outputs only; ignored (and not returned) for inputs. */
  cleanup: Type.Optional(Type.Array(ProcessConfigIOCleanup, { maxItems: 256 })),
});
export type ProcessConfigIO = Static<typeof ProcessConfigIO>;

export const ProcessConfigLimits = Type.Object({
  /** Percent of the whole machine (all cores = 100); 0 = no limit. */
  cpu_usage: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
  memory_mbytes: Type.Optional(U64({ maximum: 2 ** 33 })),
  waitfor_seconds: Type.Optional(U64()),
});
export type ProcessConfigLimits = Static<typeof ProcessConfigLimits>;

/** Run only while read (not in the reference): started by its first reader, stopped after its last left. */
export const ProcessConfigOnDemand = Type.Object({
  enable: Type.Optional(Type.Boolean({ description: 'with order `start` the process waits for a reader instead of running' })),
  idle_seconds: Type.Optional(U64({ maximum: 86_400, description: 'seconds it runs on after its last reader left; 0 = `encoder.ondemand.idle_seconds`' })),
}, { description: 'on-demand: start for the first reader of its HLS files or stream, stop after the last left' });

/** Request body of add/replace and the stored config as returned (all fields filled then). */
export const ProcessConfig = Type.Object({
  id: Type.Optional(Id()),
  /** `encoder` or its original name `ffmpeg`, returned as given (design.md section 8). */
  type: Type.Optional(Type.String({ maxLength: 64 })),
  reference: Type.Optional(Type.String({ maxLength: 4096 })),
  input: Type.Array(ProcessConfigIO, { maxItems: 256 }),
  output: Type.Array(ProcessConfigIO, { maxItems: 256 }),
  options: Type.Optional(Args()),
  reconnect: Type.Optional(Type.Boolean()),
  reconnect_delay_seconds: Type.Optional(U64()),
  autostart: Type.Optional(Type.Boolean()),
  stale_timeout_seconds: Type.Optional(U64()),
  limits: Type.Optional(ProcessConfigLimits),
  scheduler: Type.Optional(Type.String({
    maxLength: 1024,
    description: 'a 5-field cron expression (UTC) or an RFC 3339 time for a single start; empty = not scheduled',
  })),
  runtime_duration_seconds: Type.Optional(U64({ description: 'stop a run after this long (the order stays `start`); 0 = no limit' })),
  ondemand: Type.Optional(ProcessConfigOnDemand),
  owner: Type.Optional(Type.String({ maxLength: 256, description: 'who the process belongs to (the successor\'s IAM field); shown only when set' })),
  domain: Type.Optional(Type.String({ maxLength: 256, description: 'its IAM domain (`process` policies match it; none = `$none`); shown only when set' })),
});
export type ProcessConfig = Static<typeof ProcessConfig>;

/**
 * Request body of replace (PUT): decoded onto the current config (reference 4.4.4), so every
 * top-level field may be absent, `input`/`output` included; the merged config is checked again.
 */
export const ProcessConfigUpdate = Type.Partial(ProcessConfig);
export type ProcessConfigUpdate = Static<typeof ProcessConfigUpdate>;

/* Progress, report, probe and skills shapes are the parse module's (core/process/parse/schemas.ts). */
export {
  ProgressIOSchema as ProgressIO, ProgressSchema as Progress, ProcessReportSchema as ProcessReport, ProbeSchema as Probe,
  SkillsSchema as Skills,
};

/** Where a `playlist:` input is (a member of the state that a plugin adds through stateExtrasRef). */
const PlaylistPlayState = Type.Object({
  name: Type.String(),
  index: Type.Integer({ description: 'index of the current item, -1 between items' }),
  current: Type.Union([Type.String(), Type.Null()]),
  position: Type.Number({ description: 'seconds into the current item' }),
  next: Type.Union([Type.String(), Type.Null()]),
  played: Type.Integer(),
  skipped: Type.Integer(),
});

export const ProcessState = Type.Object({
  order: Type.String({ description: '`start` or `stop` (empty for an invalid process)' }),
  exec: Type.String({ description: 'finished, starting, running, finishing, failed, killed' }),
  runtime_seconds: Type.Integer(),
  reconnect_seconds: Type.Integer(),
  last_logline: Type.String(),
  progress: ProgressSchema,
  memory_bytes: Type.Integer(),
  cpu_usage: Type.Number({ description: 'percent of the whole machine' }),
  command: Type.Union([Type.Array(Type.String()), Type.Null()]),
  next_run: Type.Optional(Type.String({ format: 'date-time', description: 'the next start of a scheduled process with order `start` (RFC 3339, UTC)' })),
  ondemand: Type.Optional(Type.Object({
    waiting: Type.Boolean({ description: 'waits for a reader (order `start`, not running for demand)' }),
    readers: Type.Integer({ description: 'HLS viewers seen within the idle time plus stream readers' }),
    started_by: Type.Optional(Type.String({ description: 'what started the current run: `hls` or `stream`' })),
    stop_at: Type.Optional(Type.String({ format: 'date-time', description: 'when it stops unless a reader comes (RFC 3339, UTC)' })),
    idle_seconds: Type.Integer({ description: 'seconds it runs on after its last reader left' }),
  }, { description: 'why an on-demand process runs or waits (not in the reference)' })),
  playlist: Type.Optional(Type.Record(Type.String(), PlaylistPlayState, { description: 'by input ID: the `playlist:` inputs (not in the reference)' })),
});
export type ProcessState = Static<typeof ProcessState>;

export const Process = Type.Object({
  id: Type.String(),
  type: Type.String(),
  reference: Type.String(),
  created_at: Type.Integer(),
  updated_at: Type.Integer(),
  config: Type.Optional(ProcessConfig),
  state: Type.Optional(ProcessState),
  report: Type.Optional(ProcessReportSchema),
  metadata: Type.Optional(Type.Unknown()),
});
export type Process = Static<typeof Process>;

export const Command = Type.Object({
  command: Type.String({ description: 'start, stop, restart or reload' }),
});

export const ProcessListQuery = Type.Object({
  filter: Type.Optional(Type.String()),
  reference: Type.Optional(Type.String()),
  id: Type.Optional(Type.String()),
  idpattern: Type.Optional(Type.String()),
  refpattern: Type.Optional(Type.String()),
  // a plain string, as the others (checked without ajv: core/http/lazy-validators.ts)
  domain: Type.Optional(Type.String()),
});
export type ProcessListQuery = Static<typeof ProcessListQuery>;

export const IdParams = Type.Object({ id: Type.String() });
export const IdKeyParams = Type.Object({ id: Type.String(), key: Type.String() });

/** The JSON string `"OK"` several endpoints answer with. */
export const OkString = Type.String({ description: 'the JSON string "OK"' });

export type { TSchema };
