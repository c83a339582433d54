import t from 'tap';
import { pino } from 'pino';
import type { CoreEvent, EventsService, PluginState, StateDocument, StreamTable } from '../../../sdk/index.ts';
import { Recordings } from '../../../plugins/recordings/service.ts';
import type { RecordingsConfig } from '../../../plugins/recordings/schema.ts';
import { waitFor } from '../../helpers/wait.ts';
import { mapFs } from './helpers.ts';

/*
 * A write an S3 filesystem answered for and could not store later is reported as `fs.lost`
 * (plugins/s3-fs): the recording drops that segment from its index (a hole in its spans: a cut
 * never reads a missing file) and says so with `recording.segment.failed`.
 */

/** Documents in memory: `seed` gives their first values. */
function memoryState(seed: Record<string, unknown>): PluginState {
  return {
    async open<T>(name: string, opts: { init(): T }): Promise<StateDocument<T>> {
      const doc: StateDocument<T> = {
        path: name, data: (seed[name] as T | undefined) ?? opts.init(), save: async () => {},
        commit: async (apply) => { apply(); },
      };
      return doc;
    },
    async remove(name: string) { delete seed[name]; },
  };
}

/** An event bus that records emits and lets the test deliver events to subscribers. */
function fakeBus(): EventsService & { emitted: Array<{ type: string; payload?: Record<string, unknown> }>; deliver(e: Partial<CoreEvent>): void } {
  const subs: Array<(e: CoreEvent) => void> = [];
  const emitted: Array<{ type: string; payload?: Record<string, unknown> }> = [];
  let id = 0;
  return {
    emitted,
    emit: (type, _subject, payload) => { emitted.push({ type, payload }); },
    subscribe: (_filter, _from, fn) => { subs.push(fn); return { close: () => { subs.splice(subs.indexOf(fn), 1); } }; },
    declare: () => {},
    types: () => [],
    deliver(e) {
      const ev: CoreEvent = { id: ++id, boot: 'b', time: new Date().toISOString(), type: 'fs.lost', subject: {}, payload: {}, ...e };
      for (const fn of [...subs]) fn(ev);
    },
  };
}

t.test('fs.lost of an indexed segment removes it from the index', async (t) => {
  const fs = mapFs();
  const seg = (i: number) => ({ start: 1_000_000 + i * 2000, duration: 2000, bytes: 100, file: `/recordings/cam/1970-01-01/${1_000_000 + i * 2000}.ts` });
  const segments = [0, 1, 2, 3, 4].map(seg);
  const cfg = { name: 'cam', stream: 'live/cam', filesystem: 'map', prefix: '/recordings', segment_seconds: 2, retention: { max_age_seconds: 0, max_bytes: 0 } };
  const bus = fakeBus();
  const config = { enable: true, max_recordings: 4, max_segment_mbytes: 8, max_index_entries: 100, max_get_seconds: 60, retention_interval_seconds: 60 } as RecordingsConfig;
  const recs = new Recordings({
    streams: { get: () => undefined } as unknown as StreamTable, filesystems: [fs], log: pino({ level: 'silent' }), events: bus, config,
    state: memoryState({ recordings: { recordings: [cfg] }, 'index-cam': { segments: segments.map((s) => ({ ...s })) } }),
  });
  await recs.open();
  t.teardown(() => recs.close());
  t.equal(recs.view('cam', { start: -Infinity, end: Infinity }).spans!.length, 1, 'one span');

  bus.deliver({ subject: { filesystem: 'other', path: segments[2]!.file }, payload: { reason: 'AccessDenied' } });
  bus.deliver({ subject: { filesystem: 'map', path: '/elsewhere.ts' }, payload: { reason: 'AccessDenied' } });
  bus.deliver({ subject: { filesystem: 'map', path: segments[2]!.file }, payload: { bytes: 100, reason: 'AccessDenied' } });
  await waitFor(() => recs.view('cam').segments === 4, { what: 'the lost segment to leave the index' });
  const v = recs.view('cam', { start: -Infinity, end: Infinity });
  t.equal(v.bytes, 400, 'its bytes too');
  t.same(v.spans!.map((s) => s.start_ms), [segments[0]!.start, segments[3]!.start], 'a hole in the spans where it was');
  const failed = bus.emitted.filter((e) => e.type === 'recording.segment.failed');
  t.equal(failed.length, 1, 'reported once');
  t.match(failed[0]!.payload, { file: segments[2]!.file, reason: /lost by the filesystem: AccessDenied/ });
});
