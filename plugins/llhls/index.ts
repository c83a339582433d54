import { definePlugin, filesystemsRef, optional, streamTableRef } from '../../sdk/index.ts';
import { laddersRef } from '../ladders/api.ts';
import { recordingsRef } from '../recordings/api.ts';
import { LlhlsConfig, validateLlhls } from './schema.ts';

/** Admitted viewers kept at once (a new one beyond runs the `prePlay` taps on each request). */
const MAX_VIEWERS = 10_000;

/**
 * Low-Latency HLS (RFC 8216bis) of every stream of the stream table, packaged by the service
 * itself (CMAF/fMP4, no ffmpeg): `/hls/<stream>/index.m3u8` (LL) and `plain.m3u8`, served by the
 * core's file door from the `llhls` filesystem. Opt-in (`llhls.enable`).
 */
export default definePlugin({
  name: 'llhls',
  configKey: 'llhls',
  enableKey: 'llhls.enable',
  configSchema: LlhlsConfig,
  validate: validateLlhls,
  deps: { streams: streamTableRef, recordings: optional(recordingsRef), ladders: optional(laddersRef) },
  provides: [filesystemsRef],
  async setup(ctx) {
    const cfg = ctx.config;
    if (!cfg.enable) return;
    // imported when enabled: the core reads every built-in's definition, loaded or not
    const [{ LlhlsStore }, { Viewers }] = await Promise.all([import('./store.ts'), import('./viewers.ts')]);
    const target = cfg.target_duration_seconds;
    // a viewer is kept while it reloads: at least three target durations (a plain player's pace)
    const viewers = new Viewers(ctx.deps.streams, {
      keepMs: Math.max(cfg.idle_seconds * 1000, 3000 * target), max: MAX_VIEWERS, log: ctx.log,
      // the serving threads' views serve only the viewers admitted here
      onKept: (name, ip, token, kept) => store.changes.viewer(name, ip, token, kept),
    });
    const store: InstanceType<typeof LlhlsStore> = new LlhlsStore({ streams: ctx.deps.streams, recordings: ctx.deps.recordings, ladders: ctx.deps.ladders, log: ctx.log, viewers }, {
      targetDuration: target,
      partTarget: cfg.part_target_ms / 1000,
      windowSegments: Math.max(3, Math.ceil(cfg.window_seconds / target)),
      maxStreamBytes: cfg.max_stream_mbytes * 1024 * 1024,
      maxStreams: cfg.max_streams,
      idleMs: cfg.idle_seconds * 1000,
      startWaitMs: Math.max(10_000, 4000 * target),
      token: cfg.token,
      dvrWindowMs: cfg.dvr_window_seconds * 1000,
    });
    ctx.provide(filesystemsRef, store);
    const timer = setInterval(() => { store.sweep(); viewers.sweep(); }, Math.min(5000, cfg.idle_seconds * 500));
    timer.unref();
    ctx.onClose(() => {
      clearInterval(timer);
      store.close();
      viewers.close();
    });
  },
});
