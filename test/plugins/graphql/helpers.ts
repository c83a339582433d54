import type { TestApp, TestResponse } from '../../helpers/app.ts';

/** POST /api/graph/query with a query (and variables), optionally with a token. */
export function gql(app: TestApp, query: string, variables?: Record<string, unknown>, token?: string): Promise<TestResponse> {
  return app.request('POST', '/api/graph/query', { body: { query, variables }, token });
}

/** The `data` of a query that must succeed without errors. */
export async function gqlData(app: TestApp, query: string, variables?: Record<string, unknown>): Promise<any> {
  const r = await gql(app, query, variables);
  if (r.status !== 200 || r.body.errors) throw new Error(`graphql: ${r.status} ${r.text}`);
  return r.body.data;
}

/** Unix seconds as the Time scalar prints them. */
export const time = (unix: number | string): string => new Date(Number(unix) * 1000).toISOString().replace(/\.\d+Z$/, 'Z');

const MIB = 1024 * 1024;

/*
 * The reference's GraphQL shape (section 15) derived from a REST object, written here apart
 * from the plugin's own conversion so that the test checks it against the reference's list.
 */

const zeroAvIO = { state: '', packet: 0, time: 0, size_kb: 0 };
const zeroAv = { input: zeroAvIO, output: zeroAvIO, aqueue: 0, queue: 0, dup: 0, drop: 0, enc: 0, looping: false, duplicating: false, gop: '' };

function progressIO(p: any): any {
  const { keyframe: _k, framerate: _f, extradata_size_bytes: _e, pix_fmt, sampling_hz, size_kb, width, height, layout, channels, avstream, ...rest } = p;
  let av = zeroAv;
  if (avstream) {
    const { looping_runtime: _l, ...a } = avstream;
    av = a;
  }
  return {
    ...rest, size_kb: size_kb * 1024, pixfmt: pix_fmt ?? '', width: width ?? 0, height: height ?? 0, sampling: sampling_hz ?? 0,
    layout: layout ?? '', channels: channels ?? 0, avstream: av,
  };
}

function progress(p: any): any {
  const { inputs, outputs, size_kb, ...rest } = p;
  return { ...rest, input: inputs.map(progressIO), output: outputs.map(progressIO), size_kb: size_kb * 1024 };
}

const log = (l: [string, string][]) => l.map(([ts, data]) => ({ timestamp: time(ts), data }));

/** A REST Process (all parts) in the reference's GraphQL shape. */
export function expectedProcess(p: any): any {
  const c = p.config;
  const io = (x: any) => ({ id: x.id, address: x.address, options: x.options });
  const { exec, progress: pr, command, ...state } = p.state;
  return {
    id: p.id, type: p.type, reference: p.reference, created_at: time(p.created_at),
    config: {
      ...c, input: c.input.map(io), output: c.output.map(io),
      limits: { cpu_usage: c.limits.cpu_usage, memory_bytes: c.limits.memory_mbytes * MIB, waitfor_seconds: c.limits.waitfor_seconds },
    },
    state: { ...state, state: exec, progress: progress(pr), command: command ?? [] },
    report: {
      created_at: time(p.report.created_at), prelude: p.report.prelude, log: log(p.report.log),
      history: p.report.history.map((h: any) => ({ created_at: time(h.created_at), prelude: h.prelude, log: log(h.log) })),
    },
    metadata: p.metadata,
  };
}

const IO_FIELDS = 'id address index stream format type codec coder frame fps packet pps size_kb bitrate_kbit pixfmt q width height sampling layout channels avstream { input { state packet time size_kb } output { state packet time size_kb } aqueue queue dup drop enc looping duplicating gop }';
/** Every field of Process. */
export const PROCESS_FIELDS = `id type reference created_at
  config { id type reference input { id address options } output { id address options } options reconnect reconnect_delay_seconds autostart stale_timeout_seconds limits { cpu_usage memory_bytes waitfor_seconds } }
  state { order state runtime_seconds reconnect_seconds last_logline memory_bytes cpu_usage command
    progress { input { ${IO_FIELDS} } output { ${IO_FIELDS} } frame packet fps q size_kb time bitrate_kbit speed drop dup } }
  report { created_at prelude log { timestamp data } history { created_at prelude log { timestamp data } } }
  metadata`;
