import { ConfigErrorList, RtmpConfig, validAddress, type ConfigData, type ConfigErrors, Type } from '../../sdk/index.ts';

/** The plugin's settings: the `rtmp` section (enable, enable_tls, address, address_tls, app, token). */
export const RtmpSettings = RtmpConfig;
export type RtmpSettings = RtmpConfig;

/** Rules a schema cannot state (reference 6.2); keys relative to `rtmp`. */
export function validateRtmp(s: RtmpSettings, whole: Readonly<ConfigData>): ConfigErrors {
  const errs = new ConfigErrorList();
  if (s.enable && !validAddress(s.address)) errs.add('address', `'${s.address}' is not a host:port address`);
  if (s.enable_tls) {
    if (!s.enable || !whole.tls.enable) errs.add('enable_tls', 'needs rtmp.enable and tls.enable');
    if (!validAddress(s.address_tls)) errs.add('address_tls', `'${s.address_tls}' is not a host:port address`);
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
