import { Bool, ConfigErrorList, type ConfigErrors, Formatted, Int, Port, section, type Static, Str, Type } from '../../sdk/index.ts';

/** The plugin's settings: the `webrtc` section of the configuration, owned by this plugin. */
export const WebrtcConfig = section({
  enable: [Bool(false), 'Run WebRTC: WHEP playback of every stream of the stream table, WHIP ingest into it, and the player page `/webrtc/<stream>` (plugin `webrtc`).'],
  token: [Str(''), 'Token WHEP viewers and WHIP publishers must give (`Authorization: Bearer <token>` or `?token=`); empty: none.'],
  bind_address: [Formatted('bind-ip', ''), 'Address the ICE agent binds its UDP ports to; empty: every interface (its host candidates are the machine\'s addresses).'],
  udp_port_min: [Port(0), 'Lowest UDP port of WebRTC media (ICE); 0 with `udp_port_max` 0: any port the system gives. Open this range in the firewall.'],
  udp_port_max: [Port(0), 'Highest UDP port of WebRTC media (ICE).'],
  public_addresses: [Type.Array(Formatted('ip'), { default: [] }), 'Addresses added as host candidates to every answer, for a service behind a 1:1 NAT (its public IPv4 or IPv6).'],
  ice_servers: [Type.Array(Formatted('ice-server'), { default: [] }), 'STUN and TURN servers for the service\'s side of ICE: `stun:host:port`, `turn:user:password@host:port`; none are needed on a LAN.'],
  max_sessions: [Int(200, { minimum: 1, maximum: 100_000 }), 'Most WebRTC sessions (viewers and publishers) at once; more are refused with 503.'],
  max_sessions_per_address: [Int(20, { minimum: 1, maximum: 100_000 }), 'Most WebRTC sessions from one client address (IPv6: one /64) at once; more are refused with 429. The service\'s own address (127.0.0.1, ::1) counts only toward the total.'],
  max_publishers: [Int(20, { minimum: 0, maximum: 10_000 }), 'Most streams published over WHIP at once; more are refused with 503.'],
  connect_timeout_seconds: [Int(10, { minimum: 1, maximum: 300 }), 'A session whose media has not connected after this many seconds is ended.'],
  host_idle_seconds: [Int(10, { minimum: 0, maximum: 86_400 }), 'The WebRTC host process ends this many seconds after its last session and feed (its memory goes back to the system) and the next offer starts it again; 0 keeps it running.'],
  audio_bitrate_kbit: [Int(96, { minimum: 8, maximum: 510 }), 'Bitrate of the Opus audio made for WebRTC viewers from a stream\'s AAC or MP3 (kbit/s).'],
});
export type WebrtcConfig = Static<typeof WebrtcConfig>;

/** Rules a schema cannot state; keys relative to `webrtc`. */
export function validateWebrtc(w: WebrtcConfig): ConfigErrors {
  const errs = new ConfigErrorList();
  if ((w.udp_port_min === 0) !== (w.udp_port_max === 0)) errs.add('udp_port_min', 'set both udp_port_min and udp_port_max, or neither (0)');
  else if (w.udp_port_min > w.udp_port_max) errs.add('udp_port_max', 'must not be below udp_port_min');
  return errs.map;
}
