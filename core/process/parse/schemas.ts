// JSON shapes of the process report, progress, probe and skills (reference sections 5.6-5.10).
// Field names are the wire names clients already read; do not rename. Numbers are kept raw here:
// the API applies the number formatting rules of reference 2.4 when it serialises.
import { Type, type Static } from '@sinclair/typebox';

const U64 = Type.Integer({ minimum: 0 });

export const FramerateSchema = Type.Object({ min: Type.Number(), max: Type.Number(), avg: Type.Number() });
export type Framerate = Static<typeof FramerateSchema>;

export const AVstreamIOSchema = Type.Object({
  state: Type.Union([Type.Literal('running'), Type.Literal('idle')]),
  packet: U64,
  time: U64,
  size_kb: U64,
});
export type AVstreamIO = Static<typeof AVstreamIOSchema>;

export const AVstreamSchema = Type.Object({
  input: AVstreamIOSchema,
  output: AVstreamIOSchema,
  aqueue: U64,
  queue: U64,
  dup: U64,
  drop: U64,
  enc: U64,
  looping: Type.Boolean(),
  looping_runtime: U64,
  duplicating: Type.Boolean(),
  gop: Type.String(),
});
export type AVstream = Static<typeof AVstreamSchema>;

/** What a stream is, in the progress and the probe alike: media type, codec, coder. */
const MediaCodec = { type: Type.String(), codec: Type.String(), coder: Type.String() };

/** One stream of one input or output file. The optional fields are omitted when empty or 0. */
export const ProgressIOSchema = Type.Object({
  id: Type.String(),
  address: Type.String(),
  index: U64,
  stream: U64,
  format: Type.String(),
  ...MediaCodec,
  frame: U64,
  keyframe: U64,
  framerate: FramerateSchema,
  fps: Type.Number(),
  packet: U64,
  pps: Type.Number(),
  size_kb: U64,
  bitrate_kbit: Type.Number(),
  extradata_size_bytes: U64,
  pix_fmt: Type.Optional(Type.String()),
  q: Type.Number(),
  width: Type.Optional(U64),
  height: Type.Optional(U64),
  sampling_hz: Type.Optional(U64),
  layout: Type.Optional(Type.String()),
  channels: Type.Optional(U64),
  avstream: Type.Union([AVstreamSchema, Type.Null()]),
});
export type ProgressIO = Static<typeof ProgressIOSchema>;

export const ProgressSchema = Type.Object({
  inputs: Type.Array(ProgressIOSchema),
  outputs: Type.Array(ProgressIOSchema),
  frame: U64,
  packet: U64,
  fps: Type.Number(),
  q: Type.Number(),
  size_kb: U64,
  /** Output timestamp in seconds. */
  time: Type.Number(),
  bitrate_kbit: Type.Number(),
  speed: Type.Number(),
  drop: U64,
  dup: U64,
});
export type Progress = Static<typeof ProgressSchema>;

/** A captured stderr line as kept in memory; `timestamp` is in milliseconds. */
export const LogEntrySchema = Type.Object({ timestamp: Type.Number(), data: Type.String() });
export type LogEntry = Static<typeof LogEntrySchema>;

/** A log line on the wire: `["<unix seconds>", "<line>"]`. */
export const ReportLogLineSchema = Type.Tuple([Type.String(), Type.String()]);
export type ReportLogLine = Static<typeof ReportLogLineSchema>;

/**
 * A finished run. The reference (5.7) lists created_at, prelude and log; exit_state and progress
 * (how the run ended and its last figures) are additions that old clients simply ignore.
 */
export const ReportHistoryEntrySchema = Type.Object({
  created_at: Type.Integer(),
  prelude: Type.Array(Type.String()),
  log: Type.Array(ReportLogLineSchema),
  exit_state: Type.Optional(Type.String()),
  progress: Type.Optional(ProgressSchema),
});
export type ReportHistoryEntry = Static<typeof ReportHistoryEntrySchema>;

export const ProcessReportSchema = Type.Object({
  created_at: Type.Integer(),
  prelude: Type.Array(Type.String()),
  log: Type.Array(ReportLogLineSchema),
  history: Type.Array(ReportHistoryEntrySchema),
});
export type ProcessReport = Static<typeof ProcessReportSchema>;

/** Every field is always present (reference 5.8). */
export const ProbeIOSchema = Type.Object({
  url: Type.String(),
  format: Type.String(),
  index: U64,
  stream: U64,
  language: Type.String(),
  ...MediaCodec,
  bitrate_kbps: Type.Number(),
  duration_sec: Type.Number(),
  fps: Type.Number(),
  pix_fmt: Type.String(),
  width: U64,
  height: U64,
  sampling_hz: U64,
  layout: Type.String(),
  channels: U64,
});
export type ProbeIO = Static<typeof ProbeIOSchema>;

export const ProbeSchema = Type.Object({
  streams: Type.Array(ProbeIOSchema),
  log: Type.Array(Type.String()),
});
export type Probe = Static<typeof ProbeSchema>;

const IdName = Type.Object({ id: Type.String(), name: Type.String() });

export const SkillsLibrarySchema = Type.Object({ name: Type.String(), compiled: Type.String(), linked: Type.String() });
export type SkillsLibrary = Static<typeof SkillsLibrarySchema>;

export const SkillsFilterSchema = IdName;
export type SkillsFilter = Static<typeof SkillsFilterSchema>;

export const SkillsHWAccelSchema = IdName;
export type SkillsHWAccel = Static<typeof SkillsHWAccelSchema>;

export const SkillsFormatSchema = IdName;
export type SkillsFormat = Static<typeof SkillsFormatSchema>;

export const SkillsProtocolSchema = IdName;
export type SkillsProtocol = Static<typeof SkillsProtocolSchema>;

/** `decoders`/`encoders` are null when ffmpeg cannot decode/encode the codec (reference 5.10). */
export const SkillsCodecSchema = Type.Object({
  ...IdName.properties,
  encoders: Type.Union([Type.Array(Type.String()), Type.Null()]),
  decoders: Type.Union([Type.Array(Type.String()), Type.Null()]),
});
export type SkillsCodec = Static<typeof SkillsCodecSchema>;

export const SkillsHWDeviceSchema = Type.Object({ ...IdName.properties, extra: Type.String(), media: Type.String() });
export type SkillsHWDevice = Static<typeof SkillsHWDeviceSchema>;

export const SkillsDeviceSchema = Type.Object({ ...IdName.properties, devices: Type.Array(SkillsHWDeviceSchema) });
export type SkillsDevice = Static<typeof SkillsDeviceSchema>;

export const SkillsSchema = Type.Object({
  ffmpeg: Type.Object({
    version: Type.String(),
    compiler: Type.String(),
    configuration: Type.String(),
    libraries: Type.Array(SkillsLibrarySchema),
  }),
  filter: Type.Array(SkillsFilterSchema),
  hwaccels: Type.Array(SkillsHWAccelSchema),
  codecs: Type.Object({
    audio: Type.Array(SkillsCodecSchema),
    video: Type.Array(SkillsCodecSchema),
    subtitle: Type.Array(SkillsCodecSchema),
  }),
  devices: Type.Object({ demuxers: Type.Array(SkillsDeviceSchema), muxers: Type.Array(SkillsDeviceSchema) }),
  formats: Type.Object({ demuxers: Type.Array(SkillsFormatSchema), muxers: Type.Array(SkillsFormatSchema) }),
  protocols: Type.Object({ input: Type.Array(SkillsProtocolSchema), output: Type.Array(SkillsProtocolSchema) }),
});
export type Skills = Static<typeof SkillsSchema>;
