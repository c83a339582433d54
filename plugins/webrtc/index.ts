import { childrenRef, definePlugin, optional, streamTableRef } from '../../sdk/index.ts';
import { laddersRef } from '../ladders/api.ts';
import { validateWebrtc, WebrtcConfig } from './schema.ts';

/**
 * WebRTC (plugin `webrtc`): WHEP playback of every stream of the stream table (H.264 passed
 * through, the audio made Opus by one supervised ffmpeg per watched stream), WHIP ingest into it
 * (OBS, browsers), the player page `/webrtc/<stream>` and `GET /api/v3/webrtc`. libdatachannel
 * (node-datachannel) runs in the WebRTC host process (host/), started only when `webrtc.enable`
 * is true, so a fault in it never ends the service. Tokens, ingest hooks and sessions as for RTMP and SRT.
 */
export default definePlugin({
  name: 'webrtc',
  configKey: 'webrtc',
  enableKey: 'webrtc.enable',
  configSchema: WebrtcConfig,
  validate: validateWebrtc,
  reads: ['encoder'],
  deps: { children: childrenRef, streams: streamTableRef, ladders: optional(laddersRef) },
  async setup(ctx) {
    const cfg = ctx.config;
    if (!cfg.enable) return;
    // imported when enabled: the core reads every built-in's definition, loaded or not
    const [{ WebrtcService, hostSettings }, { webrtcRoutes }] = await Promise.all([import('./service.ts'), import('./routes.ts')]);
    const d = { children: ctx.deps.children, ffmpeg: ctx.sections.encoder.binary, log: ctx.log, streams: ctx.deps.streams };
    // a reload that leaves the host's settings as they are keeps the host and its sessions
    const svc = await ctx.keep({
      key: 'host', settings: hostSettings(cfg, d.ffmpeg), close: (s) => s.close(),
      open: async () => {
        const s = new WebrtcService(cfg, d);
        await s.start();
        ctx.log.info({ libdatachannel: s.link.version }, 'WebRTC host ready');
        return s;
      },
    });
    svc.rebind(cfg, d);
    ctx.onReady(() => svc.announce());
    webrtcRoutes(ctx.http, svc, cfg.token, ctx.log, ctx.deps.ladders);
  },
});
