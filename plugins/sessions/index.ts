import { resolve } from 'node:path';
import {
  definePlugin, optional, eventsRef, filesystemsRef, metricCollectorsRef, processesRef, serverRef, sessionsRef,
} from '../../sdk/index.ts';
// not re-exported by sdk/index.ts yet
import { fileDoorRef } from '../../sdk/file-door.ts';
import { SessionsPluginConfig, validateSessions } from './schema.ts';
import { SessionRegistry } from './registry.ts';
import type { History } from './history.ts';
import { sessionRoutes } from './routes.ts';
import { tapHlsServe, tapHlsWritten } from './hls.ts';
import { HlsDoor } from './door-main.ts';
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
  deps: { processes: processesRef, filesystems: filesystemsRef, events: optional(eventsRef), server: serverRef, door: optional(fileDoorRef) },
  provides: [sessionsRef, metricCollectorsRef],
  async setup(ctx) {
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
    const { events, door } = ctx.deps;
    const onLimit = events && ((reason: string) => events.emit('session.limit', { collector: 'hls' }, { reason }));
    // viewers wherever the door runs (main and every serving thread); without the door, on main
    let hlsDoor: HlsDoor | undefined;
    if (door) {
      hlsDoor = new HlsDoor(hls, ingress, cfg.ip_ignorelist, onLimit);
      const channel = await door.tap(hlsDoor.module);
      hlsDoor.connect(channel);
      ctx.onClose(() => channel.close());
    } else {
      tapHlsServe(ctx.hooks, hls, ingress, onLimit);
    }
    // uploads are stored on main
    tapHlsWritten(ctx.hooks, ingress, ctx.deps.filesystems);
    const pollIngest = tapIngest(ctx.hooks, registry);
    tapFfmpeg(ctx.hooks, ctx.deps.processes, registry.collector('ffmpeg'));
    trackHttp(ctx.deps.server, registry.collector('http'));

    ctx.provide(sessionsRef, registry);
    ctx.provide(metricCollectorsRef, sessionMetrics(registry));
    sessionRoutes(ctx.http, registry);
    registry.start(() => pollIngest(), (now) => hlsDoor?.tick(now));
    // active sessions go to the history and the history to disk while the others still run
    ctx.onShutdown(() => registry.stop());
  },
});
