import { Bool, ConfigErrorList, type ConfigErrors, Formatted, Int, type KernelConfig, section, type Static, Str, Type } from '../../sdk/index.ts';

/** The `rtmp` section of the configuration, owned by this plugin (its schema lived in the SDK before 3.0.0). */
export const RtmpConfig = section({
  enable: [Bool(false), 'Run the RTMP server (plugin `rtmp`).'],
  enable_tls: [Bool(false), 'Run RTMPS too (needs tls.enable).'],
  address: [Formatted('listen-address', ':1935'), 'RTMP listen address.'],
  address_tls: [Formatted('listen-address', ':1936'), 'RTMPS listen address.'],
  app: [Str('/'), 'RTMP app path streams are published under.'],
  token: [Str(''), 'Token publishers and players must give.'],
  handshake_timeout_seconds: [Int(10, { minimum: 1, maximum: 3600 }), 'Seconds an RTMP connection has from accept to a started publish or play (handshake, connect, publish/play); then it is closed. RTMPS has as long again for its TLS handshake first.'],
  idle_timeout_seconds: [Int(30, { minimum: 1, maximum: 3600 }), 'Seconds without a byte in either direction before an RTMP(S) connection is closed (publishing, playing or not yet either).'],
  max_connections: [Int(1000, { minimum: 1 }), 'Most RTMP and RTMPS connections open at once; more are closed at accept.'],
  max_connections_per_address: [Int(100, { minimum: 1 }), 'Most RTMP and RTMPS connections open at once from one client address (IPv6: one /64); more are closed at accept. The service\'s own address (127.0.0.1, ::1: its processes) counts only toward the total.'],
  max_message_size_kbytes: [Int(8192, { minimum: 64, maximum: 16384 }), 'Largest RTMP audio or video message in KiB (a keyframe); a connection that announces a larger one is closed. Bounds what one connection can make the server buffer (twice this).'],
});
export type RtmpConfig = Static<typeof RtmpConfig>;

/** The plugin's settings: the `rtmp` section (enable, enable_tls, address, address_tls, app, token). */
export const RtmpSettings = RtmpConfig;
export type RtmpSettings = RtmpConfig;

/** Rules a schema cannot state (reference 6.2); keys relative to `rtmp`. */
export function validateRtmp(s: RtmpSettings, whole: Readonly<KernelConfig>): ConfigErrors {
  const errs = new ConfigErrorList();
  if (s.enable_tls) {
    if (!s.enable || !whole.tls.enable) errs.add('enable_tls', 'needs rtmp.enable and tls.enable');
    // port 0 (any free port, as in tests) gives each listener its own port
    if (s.address === s.address_tls && !/:0$/.test(s.address)) errs.add('address_tls', 'must differ from rtmp.address');
  }
  if (!s.app.startsWith('/')) errs.add('app', 'must be an absolute path');
  return errs.map;
}

/** One entry of `GET /api/v3/rtmp` (reference 5.12). */
export const RtmpChannel = Type.Object({
  name: Type.String({ description: 'The publish path without token, e.g. /live/stream' }),
});
