import { definePlugin, placeholdersRef, runCredentialsRef, streamTableRef, tlsCertificatesRef } from '../../sdk/index.ts';
import { RtmpSettings, validateRtmp } from './schema.ts';
import { rtmpServiceRef } from './ref.ts';
import { rtmpRoutes } from './routes.ts';
import { rtmpPlaceholder } from './placeholder.ts';

/**
 * The RTMP(S) server: publish and play on `rtmp.address` (and `rtmp.address_tls`), one publisher
 * per stream, token and app rules of the reference, the ingest hooks, `GET /api/v3/rtmp` and the
 * `{rtmp,name=..}` placeholder. With `rtmp.enable` off it loads nothing (node-media-server is
 * imported by service.ts only).
 */
export default definePlugin({
  name: 'rtmp',
  configKey: 'rtmp',
  enableKey: 'rtmp.enable',
  configSchema: RtmpSettings,
  validate: validateRtmp,
  deps: { placeholders: placeholdersRef, runs: runCredentialsRef, tls: tlsCertificatesRef, streams: streamTableRef },
  provides: [rtmpServiceRef],
  async setup(ctx) {
    const cfg = ctx.config;
    if (!cfg.enable) return;
    const { startRtmp, listenerSettings } = await import('./service.ts');
    const opts = { config: cfg, tls: ctx.deps.tls, streams: ctx.deps.streams, runs: ctx.deps.runs, log: ctx.log };
    // listening in setup: a busy port stops the boot with a message naming the key. A reload that
    // leaves the listener settings as they are keeps the listeners and every connection
    const rtmp = await ctx.keep({
      key: 'server', settings: listenerSettings(cfg), open: () => startRtmp(opts), close: (r) => r.close(),
      holds: (r) => {
        const { rtmp: port, rtmps } = r.ports();
        return [{ key: 'rtmp.address', proto: 'tcp', port }, ...(rtmps ? [{ key: 'rtmp.address_tls', proto: 'tcp' as const, port: rtmps }] : [])];
      },
    });
    rtmp.bind(opts);
    // the kept connections, to this app's hooks (through the table) once every plugin tapped them
    ctx.onReady(() => rtmp.announce());
    ctx.provide(rtmpServiceRef, rtmp);
    ctx.deps.placeholders.register(rtmpPlaceholder(cfg, () => rtmp.ports().rtmp));
    // what a process's command names here, for its maker's policies (the same reading its run's token is granted by)
    const { runStreamUses } = await import('./run-scope.ts');
    ctx.onClose(ctx.deps.runs.describe(runStreamUses));
    rtmpRoutes(ctx.http, rtmp);
  },
});
