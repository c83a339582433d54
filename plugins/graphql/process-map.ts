import type {
  ApiAVstream, ApiProbe, ApiProcess, ApiProcessConfig, ApiProcessReport, ApiProcessState, ApiProgress, ApiProgressIO, ApiReportLog,
} from '../../sdk/index.ts';
import { rfc3339 } from './scalars.ts';

/*
 * From the REST objects (sdk ProcessesService.view/views, the same cached JSON the routes send)
 * to the reference's GraphQL shape (section 15): `exec` is `state`, memory limits in bytes,
 * progress `size_kb` in bytes, `pixfmt`, `sampling`, no `cleanup`, no `updated_at`, times as
 * Time. No rule of the process API is computed here, only names and units change.
 */

const MIB = 1024 * 1024;

const ZERO_AV_IO = Object.freeze({ state: '', packet: 0, time: 0, size_kb: 0 });
/** The reference shows an all-zero object where REST has `avstream: null`. */
const ZERO_AV = Object.freeze({
  input: ZERO_AV_IO, output: ZERO_AV_IO, aqueue: 0, queue: 0, dup: 0, drop: 0, enc: 0, looping: false, duplicating: false, gop: '',
});

function avstream(a: ApiAVstream | null) {
  if (!a) return ZERO_AV;
  return {
    input: a.input, output: a.output, aqueue: a.aqueue, queue: a.queue, dup: a.dup, drop: a.drop, enc: a.enc,
    looping: a.looping, duplicating: a.duplicating, gop: a.gop,
  };
}

function progressIO(p: ApiProgressIO) {
  return {
    id: p.id, address: p.address, index: p.index, stream: p.stream, format: p.format, type: p.type, codec: p.codec, coder: p.coder,
    frame: p.frame, fps: p.fps, packet: p.packet, pps: p.pps,
    // the reference's GraphQL carries bytes under this name; REST has whole KiB, so this is to the KiB
    size_kb: p.size_kb * 1024,
    bitrate_kbit: p.bitrate_kbit, pixfmt: p.pix_fmt ?? '', q: p.q, width: p.width ?? 0, height: p.height ?? 0,
    sampling: p.sampling_hz ?? 0, layout: p.layout ?? '', channels: p.channels ?? 0, avstream: avstream(p.avstream),
  };
}

function progress(p: ApiProgress) {
  return {
    input: p.inputs.map(progressIO), output: p.outputs.map(progressIO), frame: p.frame, packet: p.packet, fps: p.fps, q: p.q,
    size_kb: p.size_kb * 1024, time: p.time, bitrate_kbit: p.bitrate_kbit, speed: p.speed, drop: p.drop, dup: p.dup,
  };
}

function state(s: ApiProcessState) {
  return {
    order: s.order, state: s.exec, runtime_seconds: s.runtime_seconds, reconnect_seconds: s.reconnect_seconds,
    last_logline: s.last_logline, progress: progress(s.progress), memory_bytes: s.memory_bytes, cpu_usage: s.cpu_usage,
    command: s.command ?? [], next_run: s.next_run ?? null, ondemand: s.ondemand ?? null,
  };
}

function config(c: ApiProcessConfig) {
  const io = (x: ApiProcessConfig['input'][number]) => ({ id: x.id, address: x.address, options: x.options });
  return {
    id: c.id, type: c.type, reference: c.reference, input: c.input.map(io), output: c.output.map(io), options: c.options,
    reconnect: c.reconnect, reconnect_delay_seconds: c.reconnect_delay_seconds, autostart: c.autostart,
    stale_timeout_seconds: c.stale_timeout_seconds,
    limits: { cpu_usage: c.limits.cpu_usage, memory_bytes: c.limits.memory_mbytes * MIB, waitfor_seconds: c.limits.waitfor_seconds },
    scheduler: c.scheduler ?? '', runtime_duration_seconds: c.runtime_duration_seconds ?? 0, ondemand: c.ondemand ?? null,
  };
}

const logEntries = (log: ApiReportLog) => log.map(([ts, data]) => ({ timestamp: rfc3339(Number(ts)), data }));

function report(r: ApiProcessReport) {
  return {
    created_at: rfc3339(r.created_at), prelude: r.prelude, log: logEntries(r.log),
    history: r.history.map((h) => ({ created_at: rfc3339(h.created_at), prelude: h.prelude, log: logEntries(h.log) })),
  };
}

/** A Process in the GraphQL shape; parts the REST object lacks (filtered out) stay absent. */
export function graphProcess(p: ApiProcess) {
  return {
    id: p.id, type: p.type, reference: p.reference, created_at: rfc3339(p.created_at),
    config: p.config && config(p.config),
    state: p.state && state(p.state),
    report: p.report && report(p.report),
    metadata: p.metadata ?? null,
  };
}

export type GraphProcess = ReturnType<typeof graphProcess>;

/** Probe: `duration_seconds`, `sampling`, no `format`. */
export function graphProbe(p: ApiProbe) {
  return {
    streams: p.streams.map((s) => ({
      url: s.url, index: s.index, stream: s.stream, language: s.language, type: s.type, codec: s.codec, coder: s.coder,
      bitrate_kbps: s.bitrate_kbps, duration_seconds: s.duration_sec, fps: s.fps, pix_fmt: s.pix_fmt, width: s.width,
      height: s.height, sampling: s.sampling_hz, layout: s.layout, channels: s.channels,
    })),
    log: p.log,
  };
}

/**
 * Converted processes, kept while their REST object is the same one: the engine hands out the
 * same object until a part of the process changes, so a list of 1,000 mostly idle processes is
 * converted once, not on every query.
 */
export class ProcessMapper {
  readonly #done = new WeakMap<ApiProcess, GraphProcess>();

  process(p: ApiProcess): GraphProcess {
    let g = this.#done.get(p);
    if (!g) {
      g = graphProcess(p);
      this.#done.set(p, g);
    }
    return g;
  }
}
