import type { PlaceholderDefinition } from '../../sdk/index.ts';
import type { RtmpSettings } from './schema.ts';
import { listenAddress } from './server.ts';

/**
 * `{rtmp,name=<stream>}` (reference 8.2): `rtmp://<host>:<port>[<app>]/<stream>[?token=..]` with
 * the host of `rtmp.address` (`localhost` when it binds every interface) and the bound port. With
 * `rtmp.token` set the token is the child's run token (it publishes or plays only the names its
 * command gives), never `rtmp.token` itself; without a run (a command shown, not run) there is none.
 */
export function rtmpPlaceholder(cfg: RtmpSettings, port: () => number): PlaceholderDefinition {
  const { host } = listenAddress(cfg.address);
  const h = !host || host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  const app = cfg.app === '/' ? '' : cfg.app.replace(/\/+$/, '');
  return {
    name: 'rtmp',
    contexts: ['address'],
    // computed on every use: the bound port is the real one also when the config says 0
    value: (_section, run) => `rtmp://${h}:${port()}${app}/{name}${cfg.token && run ? `?token=${run.token}` : ''}`,
  };
}
