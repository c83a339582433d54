import { definePlugin, eventsRef, optional } from '../../sdk/index.ts';
import { iamAccessRef } from '../iam/api.ts';
import { OWN_EVENTS } from './declared.ts';
import type { Retained } from './bus.ts';
import { EventsPluginConfig, validateEvents } from './schema.ts';
import type { ResumePoints } from './webhooks.ts';

/**
 * Events: one stream of what operators react to. Provides `eventsRef` (emit, subscribe, declare;
 * the core declares every plugin's `events` to it as it is provided),
 * turns the process and ingest hooks into events, serves `GET /api/v3/events` as Server-Sent
 * Events (resumable from a bounded history that survives config reloads) and posts events to the
 * configured webhooks.
 */
export default definePlugin({
  name: 'events',
  configKey: 'events',
  configSchema: EventsPluginConfig,
  validate: validateEvents,
  provides: [eventsRef],
  deps: { iam: optional(iamAccessRef) },
  events: OWN_EVENTS,
  async setup(ctx) {
    const cfg = ctx.config;
    // imported when mounted: the core reads every built-in's definition, loaded or not
    const [{ EventBus }, { EventRing }, { eventRoutes }, { SseHub }, { tapEmitters }, { Webhooks }] = await Promise.all([
      import('./bus.ts'), import('./ring.ts'), import('./routes.ts'), import('./sse.ts'), import('./taps.ts'), import('./webhooks.ts'),
    ]);
    const kept = ctx.retain<Retained>('history', () => ({ boot: Date.now().toString(36), ring: new EventRing(cfg.history), apps: 0 }));
    if (kept.ring.capacity !== cfg.history) kept.ring = new EventRing(cfg.history, kept.ring);
    kept.apps++;
    const bus = new EventBus(kept, ctx.log);
    ctx.provide(eventsRef, bus);
    tapEmitters(ctx.hooks, bus);

    const hub = new SseHub({
      limitBytes: cfg.client_buffer_kbytes * 1024, graceMs: cfg.overflow_grace_ms, heartbeatMs: cfg.heartbeat_ms,
    });
    const webhooks = new Webhooks(cfg, bus, ctx.retain<ResumePoints>('webhooks', () => new Map()));
    eventRoutes(ctx.http, bus, hub, webhooks, ctx.deps.iam);

    const first = kept.apps === 1;
    ctx.onListen((port) => bus.emit(first ? 'service.started' : 'config.reloaded', {}, first ? { port } : {}));
    ctx.onShutdown(() => bus.emit('service.stopping', {}));
    ctx.onClose(() => {
      // what was emitted while stopping reaches the streams and queues before they end
      bus.close();
      hub.close();
      webhooks.close();
    });
  },
});
