import { resolve } from 'node:path';
import { definePlugin, optional, eventsRef, fileDoorRef, filesystemsRef, httpHooksRef, processesRef, serverRef } from '../../sdk/index.ts';
import { metricCollectorsRef } from '../metrics/api.ts';
import { sessionsRef } from './api.ts';
import { SessionsConfig, validateSessions } from './schema.ts';
import type { History } from './history.ts';

/** Sessions: who watches and who publishes, per collector (README). */
export default definePlugin({
  name: 'sessions',
  configKey: 'sessions',
  configSchema: SessionsConfig,
  validate: validateSessions,
  reads: ['db'],
  deps: { processes: processesRef, filesystems: filesystemsRef, events: optional(eventsRef), server: serverRef, door: fileDoorRef },
  provides: [sessionsRef, metricCollectorsRef],
  events: [{ type: 'session.limit', subject: ['collector'], description: 'A collector started refusing new sessions (first refusal after an admission).', payload: {
    reason: '`Number of sessions exceeded` or `Bitrate limit exceeded`',
  } }],
  async setup(ctx) {
    const cfg = ctx.config;
    // imported at setup: the core reads every built-in's definition, loaded or not
    const [{ sessionRoutes }, { SessionRegistry }] = await Promise.all([import('./routes.ts'), import('./registry.ts')]);
    if (!cfg.enable) {
      // the routes still answer, with empty summaries (reference 12.1): a registry without collectors
      sessionRoutes(ctx.http, new SessionRegistry(cfg, undefined, ctx.log), ctx.hooks.get(httpHooksRef).sees);
      return;
    }
    const [{ tapHlsWritten }, { HlsViewers }, { tapIngest }, { tapFfmpeg }, { trackHttp }, { sessionMetrics }] = await Promise.all([
      import('./hls-ingress.ts'), import('./hls-viewers.ts'), import('./ingest.ts'), import('./ffmpeg.ts'), import('./http.ts'), import('./metrics.ts'),
    ]);
    const dir = cfg.persist ? resolve(ctx.sections.db.dir, 'sessions') : undefined;
    const registry = new SessionRegistry(cfg, dir, ctx.log, ctx.retain('histories', () => new Map<string, History>()));
    const hls = registry.collector('hls');
    const ingress = registry.collector('hlsingress', { idleTimeoutSec: 30, limits: false });
    for (const name of ['rtmp', 'srt', 'ffmpeg']) registry.collector(name);
    const { events, door } = ctx.deps;
    const onLimit = events && ((reason: string) => events.emit('session.limit', { collector: 'hls' }, { reason }));
    // viewers wherever the door answers (main and every serving thread): one rule, hls.ts
    const viewers = new HlsViewers(hls, ingress, cfg.ip_ignorelist, onLimit);
    const channel = await door.tap(viewers.module);
    viewers.connect(channel);
    ctx.onClose(() => channel.close());
    // uploads are stored on main
    tapHlsWritten(ctx.hooks, ingress, ctx.deps.filesystems);
    const pollIngest = tapIngest(ctx.hooks, registry);
    tapFfmpeg(ctx.hooks, ctx.deps.processes, registry.collector('ffmpeg'));
    trackHttp(ctx.deps.server, registry.collector('http'));

    ctx.provide(sessionsRef, registry);
    ctx.provide(metricCollectorsRef, sessionMetrics(registry));
    sessionRoutes(ctx.http, registry, ctx.hooks.get(httpHooksRef).sees);
    registry.start(() => pollIngest(), () => viewers.tick());
    // active sessions go to the history and the history to disk while the others still run
    ctx.onShutdown(() => registry.stop());
  },
});
