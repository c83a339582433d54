import type { IngestRefusal, StreamRefusal } from '../../sdk/index.ts';

/** The table's refusals, with stable codes (`StreamRefusalCode`). */
export const streamRefusals = {
  busy: (name: string): StreamRefusal => ({ ok: false, code: 'STREAM_BUSY', kind: 'conflict', reason: `already publishing: ${name}` }),
  notFound: (name: string): StreamRefusal => ({ ok: false, code: 'STREAM_NOT_FOUND', kind: 'not_found', reason: `stream not found: ${name}` }),
  badName: (why: string): StreamRefusal => ({ ok: false, code: 'STREAM_BAD_NAME', kind: 'forbidden', reason: `invalid stream name: ${why}` }),
  tooManyStreams: (protocol: string, max: number): StreamRefusal =>
    ({ ok: false, code: 'STREAM_LIMIT', kind: 'overloaded', reason: `${max} ${protocol} streams are live already` }),
  tooManyReaders: (name: string, max: number): StreamRefusal =>
    ({ ok: false, code: 'STREAM_LIMIT', kind: 'overloaded', reason: `stream ${name} has ${max} readers already` }),
  format: (name: string, from: string, to: string, why = 'format not available'): StreamRefusal =>
    ({ ok: false, code: 'STREAM_FORMAT_UNAVAILABLE', kind: 'not_found', reason: `${why}: ${name} is ${from}, ${to} was asked` }),
  /** A `prePublish` / `prePlay` tap said no (its kind, `forbidden` by default). */
  refused: (r: IngestRefusal): StreamRefusal => ({ ok: false, code: 'STREAM_REFUSED', kind: r.kind ?? 'forbidden', reason: r.reason }),
  /** The client went away while it was admitted. */
  gone: (): StreamRefusal => ({ ok: false, code: 'STREAM_GONE', kind: 'not_found', reason: 'the client went away while it was admitted' }),
};
