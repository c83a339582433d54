import { resolve } from 'node:path';
import {
  definePlugin, optional, eventsRef, filesystemsRef, metricCollectorsRef, processesRef, servingThreadsRef, sessionsRef,
} from '../../sdk/index.ts';
import { SessionsPluginConfig, validateSessions } from './schema.ts';
import { SessionRegistry } from './registry.ts';
import type { History } from './history.ts';
import { sessionRoutes } from './routes.ts';
import { tapHls } from './hls.ts';
import { tapIngest } from './ingest.ts';
import { tapFfmpeg } from './ffmpeg.ts';
import { trackHttp } from './http.ts';
import { sessionMetrics } from './metrics.ts';

/**
 * Sessions: who watches and who publishes, per collector (`hls`, `hlsingress`, `rtmp`, `srt`,
 * `ffmpeg`, `http`, a vendor's), from the file-serving, ingest and process hooks and the sockets.
 * `GET /api/v3/session`, `GET /api/v3/session/active`, the `sessionsRef` registry, the
 * `session_*` metrics, and the history in `<db.dir>/sessions/<collector>.json` when `sessions.persist` is on.
 */
export default definePlugin({
  name: 'sessions',
  configKey: 'sessions',
  configSchema: SessionsPluginConfig,
  validate: validateSessions,
  reads: ['db'],
  deps: { processes: processesRef, filesystems: filesystemsRef, events: optional(eventsRef), threads: optional(servingThreadsRef) },
  provides: [sessionsRef, metricCollectorsRef],
  setup(ctx) {
    const cfg = ctx.config;
    if (!cfg.enable) {
      // the routes still answer, with empty summaries (reference 12.1)
      sessionRoutes(ctx.http, undefined);
      return;
    }
    const dir = cfg.persist ? resolve(ctx.sections.db.dir, 'sessions') : undefined;
    const registry = new SessionRegistry(cfg, dir, ctx.log, ctx.retain('histories', () => new Map<string, History>()));
    const hls = registry.collector('hls');
    const ingress = registry.collector('hlsingress', { idleTimeoutSec: 30, limits: false });
    for (const name of ['rtmp', 'srt', 'ffmpeg']) registry.collector(name);
    const { events } = ctx.deps;
    tapHls(ctx.hooks, hls, ingress, ctx.deps.filesystems, events && ((reason) => events.emit('session.limit', { collector: 'hls' }, { reason })));
    const pollIngest = tapIngest(ctx.hooks, registry);
    tapFfmpeg(ctx.hooks, ctx.deps.processes, registry.collector('ffmpeg'));
    const http = trackHttp(ctx.http.server, registry.collector('http'), ctx.deps.threads);
    ctx.onClose(http.stop);

    ctx.provide(sessionsRef, registry);
    ctx.provide(metricCollectorsRef, sessionMetrics(registry));
    sessionRoutes(ctx.http, registry);
    registry.start(() => {
      pollIngest();
      http.poll();
    });
    // active sessions go to the history and the history to disk while the others still run
    ctx.onShutdown(() => registry.stop());
  },
});
