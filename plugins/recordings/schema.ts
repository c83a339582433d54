import { Bool, Int, section, type Static, Type } from '../../sdk/index.ts';

/** The `recordings` section of the configuration, owned by this plugin (beyond the reference). */
export const RecordingsConfig = section({
  enable: [Bool(false), 'Record streams of the stream table into any filesystem (plugin `recordings`, `/api/v3/recordings`).'],
  max_recordings: [Int(64, { minimum: 1, maximum: 10_000 }), 'Recordings that may exist at once; more are refused with 429.'],
  max_segment_mbytes: [Int(64, { minimum: 1, maximum: 4096 }), 'MiB one segment may hold (kept in memory until it is stored); beyond, it is closed and the source skipped to the next keyframe.'],
  max_index_entries: [Int(50_000, { minimum: 10, maximum: 10_000_000 }), 'Segments kept in the index of one recording; the oldest are deleted beyond.'],
  max_get_seconds: [Int(600, { minimum: 1, maximum: 86_400 }), 'Longest cut `GET /api/v3/recordings/{name}/get` returns, in seconds.'],
  retention_interval_seconds: [Int(60, { minimum: 1, maximum: 60 }), 'Seconds between two retention checks (at most 60).'],
});
export type RecordingsConfig = Static<typeof RecordingsConfig>;

const NAME = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$';

export const Retention = Type.Object({
  max_age_seconds: Type.Optional(Type.Integer({ minimum: 0, description: 'delete segments older than this (0 = keep)' })),
  max_bytes: Type.Optional(Type.Integer({ minimum: 0, description: 'keep at most this many bytes (0 = no limit)' })),
}, { additionalProperties: false });

const settings = {
  stream: Type.String({ minLength: 1, maxLength: 1024, description: 'name of the stream in the stream table (`live/abc`)' }),
  filesystem: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'filesystem name or alias (default `disk`)' })),
  prefix: Type.Optional(Type.String({ maxLength: 512, description: 'folder of the segments in the filesystem (default `/recordings`)' })),
  segment_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 60, description: 'shortest segment (cut at the next keyframe), default 4' })),
  retention: Type.Optional(Retention),
};

/** `PUT /api/v3/recordings/{name}`. */
export const RecordingSettings = Type.Object(settings, { additionalProperties: false });
export type RecordingSettings = Static<typeof RecordingSettings>;

/** `POST /api/v3/recordings`. */
export const RecordingCreate = Type.Object({ name: Type.String({ pattern: NAME }), ...settings }, { additionalProperties: false });
export type RecordingCreate = Static<typeof RecordingCreate>;

export const NameParams = Type.Object({ name: Type.String({ pattern: NAME }) });

/** RFC 3339 or unix seconds (milliseconds when it has more than 11 digits). */
const Time = Type.String({ maxLength: 64 });

export const SpansQuery = Type.Object({ start: Type.Optional(Time), end: Type.Optional(Time) });
export const CutQuery = Type.Object({
  start: Time,
  duration: Type.Optional(Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$', description: 'seconds (default 30)' })),
  format: Type.Optional(Type.Union([Type.Literal('mp4'), Type.Literal('ts')])),
});
export const DeleteQuery = Type.Object({ keep_files: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])) });

export const SpanView = Type.Object({
  start: Type.String({ description: 'RFC 3339 with milliseconds' }),
  start_ms: Type.Integer(),
  duration: Type.Number({ description: 'seconds' }),
});

/** One recording as the API shows it. */
export const RecordingView = Type.Object({
  name: Type.String(),
  stream: Type.String(),
  filesystem: Type.String(),
  prefix: Type.String(),
  segment_seconds: Type.Integer(),
  retention: Type.Object({ max_age_seconds: Type.Integer(), max_bytes: Type.Integer() }),
  recording: Type.Boolean({ description: 'the stream is live and being recorded' }),
  storing: Type.Integer({ description: 'segments cut and not stored yet' }),
  segments: Type.Integer(),
  bytes: Type.Integer(),
  spans: Type.Optional(Type.Array(SpanView)),
});
export type RecordingView = Static<typeof RecordingView>;

/** What is stored of a recording. */
export interface RecordingConfig {
  name: string;
  stream: string;
  filesystem: string;
  prefix: string;
  segment_seconds: number;
  retention: { max_age_seconds: number; max_bytes: number };
}
