import type * as P from './parse/schemas.ts';

/*
 * The process API's JSON, written by hand: exact number formatting (reference 2.4: rule N
 * `25`/`24.975`, rule F3 `25.000`, which JS numbers cannot carry through JSON.stringify), as
 * parts that callers cache until they change (see views.ts). Field names and order follow the
 * schemas in schema.ts / parse/schemas.ts; tests check the output against them.
 */

const str = JSON.stringify as (s: string) => string;
const int = (v: number): string => (Number.isFinite(v) ? String(Math.trunc(v)) : '0');

/** Rule N: integral values without decimals, others with exactly three. */
export function numN(v: number): string {
  if (!Number.isFinite(v)) return '0';
  return Number.isInteger(v) ? String(v) : v.toFixed(3);
}

/** Rule F3: always three decimals. */
export function numF3(v: number): string {
  return Number.isFinite(v) ? v.toFixed(3) : '0.000';
}

function avstreamIO(a: P.AVstreamIO): string {
  return `{"state":${str(a.state)},"packet":${int(a.packet)},"time":${int(a.time)},"size_kb":${int(a.size_kb)}}`;
}

function avstream(a: P.AVstream | null): string {
  if (!a) return 'null';
  return `{"input":${avstreamIO(a.input)},"output":${avstreamIO(a.output)},"aqueue":${int(a.aqueue)},"queue":${int(a.queue)},`
    + `"dup":${int(a.dup)},"drop":${int(a.drop)},"enc":${int(a.enc)},"looping":${a.looping},"looping_runtime":${int(a.looping_runtime)},`
    + `"duplicating":${a.duplicating},"gop":${str(a.gop)}}`;
}

function progressIO(io: P.ProgressIO): string {
  const f = io.framerate;
  let s = `{"id":${str(io.id)},"address":${str(io.address)},"index":${int(io.index)},"stream":${int(io.stream)},`
    + `"format":${str(io.format)},"type":${str(io.type)},"codec":${str(io.codec)},"coder":${str(io.coder)},`
    + `"frame":${int(io.frame)},"keyframe":${int(io.keyframe)},`
    + `"framerate":{"min":${numF3(f.min)},"max":${numF3(f.max)},"avg":${numF3(f.avg)}},"fps":${numF3(io.fps)},`
    + `"packet":${int(io.packet)},"pps":${numF3(io.pps)},"size_kb":${int(io.size_kb)},"bitrate_kbit":${numF3(io.bitrate_kbit)},`
    + `"extradata_size_bytes":${int(io.extradata_size_bytes)}`;
  // omitted when empty, as the reference's JSON does
  if (io.pix_fmt) s += `,"pix_fmt":${str(io.pix_fmt)}`;
  s += `,"q":${numF3(io.q)}`;
  if (io.width) s += `,"width":${int(io.width)}`;
  if (io.height) s += `,"height":${int(io.height)}`;
  if (io.sampling_hz) s += `,"sampling_hz":${int(io.sampling_hz)}`;
  if (io.layout) s += `,"layout":${str(io.layout)}`;
  if (io.channels) s += `,"channels":${int(io.channels)}`;
  return `${s},"avstream":${avstream(io.avstream)}}`;
}

const list = <T>(items: readonly T[], fn: (x: T) => string): string => `[${items.map(fn).join(',')}]`;

// Strings that get cached (progress, report, state) are joined from arrays: a join's result is flat,
// so a later join or UTF-8 encoding copies them instead of walking a concatenation tree.

export function progressJson(p: Readonly<P.Progress>): string {
  return ['{"inputs":', list(p.inputs, progressIO), ',"outputs":', list(p.outputs, progressIO), ',"frame":', int(p.frame),
    ',"packet":', int(p.packet), ',"fps":', numN(p.fps), ',"q":', numN(p.q), ',"size_kb":', int(p.size_kb), ',"time":', numN(p.time),
    ',"bitrate_kbit":', numN(p.bitrate_kbit), ',"speed":', numN(p.speed), ',"drop":', int(p.drop), ',"dup":', int(p.dup), '}'].join('');
}

/** ProcessState (reference 5.6); `progress` and `command` arrive as JSON already. */
export interface StateParts {
  order: string;
  exec: string;
  runtimeSeconds: number;
  reconnectSeconds: number;
  lastLogline: string;
  progress: string;
  memoryBytes: number;
  cpuUsage: number;
  command: string;
  /** RFC 3339; only for a scheduled process waiting for its next start. */
  nextRun?: string;
  /** JSON of `state.ondemand`; only for an on-demand process. */
  ondemand?: string;
}

export function stateJson(s: StateParts): string {
  return ['{"order":', str(s.order), ',"exec":', str(s.exec), ',"runtime_seconds":', int(s.runtimeSeconds),
    ',"reconnect_seconds":', int(s.reconnectSeconds), ',"last_logline":', str(s.lastLogline), ',"progress":', s.progress,
    ',"memory_bytes":', int(s.memoryBytes), ',"cpu_usage":', numN(s.cpuUsage), ',"command":', s.command,
    s.nextRun === undefined ? '' : `,"next_run":${str(s.nextRun)}`, s.ondemand === undefined ? '' : `,"ondemand":${s.ondemand}`, '}'].join('');
}

function historyEntry(h: P.ReportHistoryEntry): string {
  let s = `{"created_at":${int(h.created_at)},"prelude":${JSON.stringify(h.prelude)},"log":${JSON.stringify(h.log)}`;
  if (h.exit_state !== undefined) s += `,"exit_state":${str(h.exit_state)}`;
  if (h.progress !== undefined) s += `,"progress":${progressJson(h.progress)}`;
  return `${s}}`;
}

export function reportJson(r: P.ProcessReport): string {
  return ['{"created_at":', int(r.created_at), ',"prelude":', JSON.stringify(r.prelude), ',"log":', JSON.stringify(r.log),
    ',"history":', list(r.history, historyEntry), '}'].join('');
}

function probeIO(p: P.ProbeIO): string {
  return `{"url":${str(p.url)},"format":${str(p.format)},"index":${int(p.index)},"stream":${int(p.stream)},`
    + `"language":${str(p.language)},"type":${str(p.type)},"codec":${str(p.codec)},"coder":${str(p.coder)},`
    + `"bitrate_kbps":${numN(p.bitrate_kbps)},"duration_sec":${numN(p.duration_sec)},"fps":${numN(p.fps)},`
    + `"pix_fmt":${str(p.pix_fmt)},"width":${int(p.width)},"height":${int(p.height)},"sampling_hz":${int(p.sampling_hz)},`
    + `"layout":${str(p.layout)},"channels":${int(p.channels)}}`;
}

export function probeJson(p: P.Probe): string {
  return `{"streams":${list(p.streams, probeIO)},"log":${JSON.stringify(p.log)}}`;
}

/** Process (reference 5.3): the base fields plus the parts a filter asked for, each already JSON. */
export interface ProcessParts {
  id: string;
  type: string;
  reference: string;
  createdAt: number;
  updatedAt: number;
  config?: string;
  state?: string;
  report?: string;
  metadata?: string;
}

export function processJson(p: ProcessParts): string {
  const out = ['{"id":', str(p.id), ',"type":', str(p.type), ',"reference":', str(p.reference), ',"created_at":', int(p.createdAt),
    ',"updated_at":', int(p.updatedAt)];
  if (p.config !== undefined) out.push(',"config":', p.config);
  if (p.state !== undefined) out.push(',"state":', p.state);
  if (p.report !== undefined) out.push(',"report":', p.report);
  if (p.metadata !== undefined) out.push(',"metadata":', p.metadata);
  out.push('}');
  return out.join('');
}
