import {
  childrenRef, definePlugin, eventsRef, filesystemsRef, optional, streamTableRef,
} from '../../sdk/index.ts';
import { RecordingsConfig } from './schema.ts';
import { recordingsRef } from './api.ts';

/**
 * Recordings: streams of the stream table written as keyframe-aligned MPEG-TS segments into any
 * filesystem of the registry, indexed by wall-clock time (`index-<name>` documents), listed as
 * continuous spans and cut into one MP4 or TS file by time range, without re-encoding. Retention
 * by age and size per recording. `/api/v3/recordings`; disabled, the routes are absent.
 */
export default definePlugin({
  name: 'recordings',
  configKey: 'recordings',
  enableKey: 'recordings.enable',
  configSchema: RecordingsConfig,
  reads: ['encoder'],
  deps: { streams: streamTableRef, filesystems: filesystemsRef, children: childrenRef, events: optional(eventsRef) },
  provides: [recordingsRef],
  events: [
    { type: 'recording.started', subject: ['recording', 'stream'], description: 'A recording started reading its stream (published, or the recording was created while it was).', payload: {
      filesystem: 'where its segments go',
    } },
    { type: 'recording.stopped', subject: ['recording', 'stream'], description: 'A recording stopped reading: the publisher left (a gap in the index), or it was changed, deleted or shut down.', payload: {
      reason: '`ended`, `dropped`, `stopped`, `changed`, `deleted` or `shutdown`',
    } },
    { type: 'recording.segment.failed', subject: ['recording', 'stream'], description: 'A segment was not stored (the filesystem refused it, too many waited, or it outgrew `max_segment_mbytes`).', payload: {
      reason: 'the message', file: 'the segment\'s path, when it had one',
    } },
  ],
  async setup(ctx) {
    const cfg = ctx.config;
    if (!cfg.enable) return;
    const [{ Recordings }, { recordingRoutes }] = await Promise.all([import('./service.ts'), import('./routes.ts')]);
    const recs = new Recordings({
      streams: ctx.deps.streams, filesystems: ctx.deps.filesystems, state: ctx.state, log: ctx.log, events: ctx.deps.events, config: cfg,
    });
    await recs.open();
    ctx.provide(recordingsRef, recs);
    recordingRoutes(ctx.http, recs, { children: ctx.deps.children, ffmpeg: ctx.sections.encoder.binary, maxSeconds: cfg.max_get_seconds });
    let off: (() => void) | undefined;
    ctx.onReady(() => {
      off = ctx.deps.streams.onChange(() => recs.attachAll());
      recs.attachAll();
    });
    // segments being cut are stored before the filesystems close
    ctx.onShutdown(async () => { off?.(); await recs.close(); });
    const timer = setInterval(() => {
      recs.retainAll().catch((err: unknown) => ctx.log.warn({ err }, 'recording retention failed'));
    }, cfg.retention_interval_seconds * 1000);
    timer.unref();
    ctx.onClose(() => clearInterval(timer));
  },
});
