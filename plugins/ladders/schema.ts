import { Bool, Int, Str, section, Type, type Static } from '../../sdk/index.ts';

/** Rungs one ladder may have. */
export const MAX_RUNGS = 8;
/** Longest ladder id. */
export const MAX_ID_LENGTH = 64;
/** Longest stream name or pattern of a ladder. */
export const MAX_STREAM_LENGTH = 512;
/** A ladder id: letters, digits, `_`, `.`, `-`, not starting with a sign. */
export const ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$';

/** One custom rung (a preset is written by its name instead). */
export const RungObject = Type.Object({
  name: Type.String({ maxLength: 32, description: 'the rendition\'s last name segment (`720p` -> `<stream>/720p`): `[a-z0-9][a-z0-9_-]*`' }),
  height: Type.Optional(Type.Integer({ description: 'output height in pixels (16-4320; width keeps the aspect, even); 0 or absent: audio only unless `copy`' })),
  video_kbps: Type.Optional(Type.Integer({ description: 'video bitrate in kbit/s (`-b:v`, `-maxrate`; `-bufsize` twice it), 50-50000' })),
  audio_kbps: Type.Optional(Type.Integer({ description: 'AAC bitrate in kbit/s, 16-512; 0: no audio' })),
  fps: Type.Optional(Type.Number({ description: 'output frame rate (`-r`), 1-120; absent: the source\'s' })),
  profile: Type.Optional(Type.String({ description: 'H.264 profile: `baseline`, `main` or `high` (default `main`)' })),
  copy: Type.Optional(Type.Boolean({ description: 'the source\'s video untouched (one rung at most; `height`, `video_kbps`, `fps`, `profile` unused)' })),
});
export type RungObject = Static<typeof RungObject>;

/** A rung as written: a preset's name or a custom rung. */
export const RungInput = Type.Union([Type.String({ maxLength: 32 }), RungObject]);

/** Per-process limits of the ladder's ffmpeg (the process engine's `limits`). */
export const LadderLimits = Type.Object({
  cpu_usage: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: 'percent of the whole machine; 0 = none' })),
  memory_mbytes: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_048_576, description: 'MiB; 0 = none' })),
  waitfor_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400, description: 'seconds over a limit before it is killed' })),
});

const settings = {
  stream: Type.Optional(Type.String({ maxLength: MAX_STREAM_LENGTH, description: 'the one stream (table name, `live/cam`) this ladder is for' })),
  pattern: Type.Optional(Type.String({ maxLength: MAX_STREAM_LENGTH, description: 'a glob of stream names instead (`live/*`: `*` stays within a `/` segment, `**` crosses)' })),
  rungs: Type.Array(RungInput, { description: `presets (\`1080p\`, \`720p\`, \`480p\`, \`360p\`, \`240p\`, \`audio\`, \`source\`) or custom rungs, 1 to ${MAX_RUNGS}` }),
  gop_seconds: Type.Optional(Type.Number({ description: 'seconds between the aligned keyframes of every encoded rung, 0.5-10 (default 2)' })),
  idle_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400, description: 'seconds the ladder runs on after its last reader left; 0 = `ladders.idle_seconds`' })),
  limits: Type.Optional(LadderLimits),
};

/** `PUT /api/v3/ladders/{id}` (unknown fields are ignored). */
export const LadderSettings = Type.Object(settings);
export type LadderSettings = Static<typeof LadderSettings>;

/** A ladder of the config file: the same with its id. */
export const LadderEntry = Type.Object({ id: Type.String({ pattern: ID_PATTERN }), ...settings });
export type LadderEntry = Static<typeof LadderEntry>;

export const IdParams = Type.Object({ id: Type.String({ pattern: ID_PATTERN }) });

/** A rung as it runs: every figure filled. */
export const RungView = Type.Object({
  name: Type.String(),
  height: Type.Integer({ description: '0 for audio only and for `copy`' }),
  video_kbps: Type.Integer(),
  audio_kbps: Type.Integer(),
  fps: Type.Optional(Type.Number()),
  profile: Type.String(),
  copy: Type.Boolean(),
});
export type RungView = Static<typeof RungView>;

/** One ladder as the API shows it. */
export const LadderView = Type.Object({
  id: Type.String(),
  stream: Type.Optional(Type.String()),
  pattern: Type.Optional(Type.String()),
  rungs: Type.Array(RungView),
  gop_seconds: Type.Number(),
  idle_seconds: Type.Integer(),
  limits: Type.Object({ cpu_usage: Type.Number(), memory_mbytes: Type.Integer(), waitfor_seconds: Type.Integer() }),
  source: Type.Union([Type.Literal('config'), Type.Literal('api')], { description: '`config`: from the config file (read-only here)' }),
  processes: Type.Array(Type.Object({
    id: Type.String({ description: 'the process of the engine that runs it (`/api/v3/process/{id}`)' }),
    stream: Type.String(),
    exec: Type.String(),
  }), { description: 'one per stream it runs for (an exact ladder has one; a pattern one per matching live stream)' }),
  error: Type.Optional(Type.String({ description: 'why the engine refused its process at the last change (e.g. `rtmp.enable` off)' })),
});
export type LadderView = Static<typeof LadderView>;

/** The `ladders` section of the configuration, owned by this plugin (beyond the reference). */
export const LaddersConfig = section({
  enable: [Bool(false), 'Adaptive-bitrate ladders (plugin `ladders`, `/api/v3/ladders`): renditions `<stream>/<rung>` of streams of the stream table, made by one on-demand ffmpeg per stream. Needs `rtmp.enable` (with `rtmp.app` `/`).'],
  ladders: [Type.Array(LadderEntry, { default: [] }), 'Ladders of the config file: `{id, stream | pattern, rungs, gop_seconds?, idle_seconds?, limits?}` (read-only through the API).'],
  max_ladders: [Int(100, { minimum: 1, maximum: 10_000 }), 'Ladders that may exist at once (config and API); more are refused with 429.'],
  idle_seconds: [Int(30, { minimum: 1, maximum: 86_400 }), 'Seconds a ladder\'s ffmpeg runs on after its last reader left (a ladder\'s own `idle_seconds` wins).'],
  linger_seconds: [Int(60, { minimum: 1, maximum: 86_400 }), 'Seconds the process of a pattern ladder stays after its stream ended; a publish within that time keeps it.'],
  encoder: [Str('auto'), 'Video encoder of the rungs: `auto` (a hardware one the skills list whose device is present: `h264_nvenc`, `h264_qsv`, `h264_vaapi`; else `libx264`), or one of those by name.'],
  preset: [Str('veryfast'), 'x264 preset of the rungs (`ultrafast` ... `veryslow`): speed against quality per bit.'],
});
export type LaddersConfig = Static<typeof LaddersConfig>;
