import { ipFamily } from '../../sdk/ip.ts';
import type { ConfigErrors } from '../../sdk/index.ts';
import type { ConfigData } from './config-data.ts';
import { listenAddress } from '../http/listen-address.ts';
import { parseAddress } from './address.ts';

/** One socket a config makes the service bind. */
export interface Listener {
  /** The config key of its address. */
  key: string;
  /** What listens there, for messages. */
  what: string;
  proto: 'tcp' | 'udp';
  /** As it will be bound (`0.0.0.0`/`::` = every interface). */
  host: string;
  port: number;
}

/** The API's ports now: a reload binds them again where the config says port 0. */
export interface KeptPorts {
  http?: number;
  https?: number;
}

/**
 * A section the build may have (the core types none of its plugins' sections): its values are
 * checked where read, a build without it has no such listener.
 */
function section(cfg: ConfigData, key: string): Readonly<Record<string, unknown>> | undefined {
  const value = (cfg as unknown as Record<string, unknown>)[key];
  return value !== null && typeof value === 'object' ? value as Record<string, unknown> : undefined;
}

/**
 * The listeners `cfg` asks for: HTTP (`address`), HTTPS (`tls.address` with TLS on), RTMP and
 * RTMPS (`rtmp.address`, `rtmp.address_tls`), SRT over UDP (`srt.address`), WebRTC's UDP address
 * (`webrtc.bind_address`, port 0: its ports are per session). Hosts as each one
 * binds them: the API's host-less address means 127.0.0.1 with auth off (listen-address.ts),
 * RTMP's every interface (`::`), SRT's every IPv4 interface. Addresses must have passed the
 * value checks (validate.ts and the plugins' own). `kept`: the API's ports a reload keeps.
 */
export function listenersOf(cfg: ConfigData, kept: KeptPorts = {}): Listener[] {
  const out: Listener[] = [];
  const api = (key: string, what: string, address: string, keep?: number) => {
    const { host, port } = listenAddress(address, cfg);
    out.push({ key, what, proto: 'tcp', host, port: port === 0 && keep ? keep : port });
  };
  const plain = (key: string, what: string, proto: 'tcp' | 'udp', address: string, anyHost: string) => {
    const { host, port } = parseAddress(address);
    const hostless = /^:?\d+$/.test(address.trim());
    out.push({ key, what, proto, host: hostless ? anyHost : host, port });
  };
  api('address', 'HTTP', cfg.address, kept.http);
  if (cfg.tls.enable) api('tls.address', 'HTTPS', cfg.tls.address, kept.https);
  const rtmp = section(cfg, 'rtmp');
  if (rtmp?.enable === true) {
    if (typeof rtmp.address === 'string') plain('rtmp.address', 'RTMP', 'tcp', rtmp.address, '::');
    if (rtmp.enable_tls === true && typeof rtmp.address_tls === 'string') plain('rtmp.address_tls', 'RTMPS', 'tcp', rtmp.address_tls, '::');
  }
  const srt = section(cfg, 'srt');
  if (srt?.enable === true && typeof srt.address === 'string') plain('srt.address', 'SRT', 'udp', srt.address, '0.0.0.0');
  // WebRTC binds a UDP port per session (any, or in udp_port_min..max) on its address: only that
  // address is tried (port 0), so a host that is not this machine's is refused, not every offer
  const webrtc = section(cfg, 'webrtc');
  if (webrtc?.enable === true && typeof webrtc.bind_address === 'string' && webrtc.bind_address) {
    out.push({ key: 'webrtc.bind_address', what: 'WebRTC', proto: 'udp', host: webrtc.bind_address, port: 0 });
  }
  return out;
}

function norm(host: string): string {
  const h = host.toLowerCase();
  return h === 'localhost' ? '127.0.0.1' : h;
}

/** Whether two hosts on the same port and protocol would take the same socket address. */
function overlap(a: string, b: string): boolean {
  const x = norm(a);
  const y = norm(b);
  if (x === y || x === '::' || y === '::') return true;
  // the IPv4 wildcard takes every IPv4 address, not the IPv6 ones
  if (x === '0.0.0.0') return ipFamily(y) !== 6;
  if (y === '0.0.0.0') return ipFamily(x) !== 6;
  return false;
}

/**
 * Listeners of one config that would take the same port: the later key is named (RTMP on the
 * HTTP port, RTMPS on the HTTPS port, ...). UDP (SRT) never collides with TCP; port 0 (any free
 * port) never collides.
 */
export function listenerCollisions(listeners: readonly Listener[]): ConfigErrors {
  const errs: ConfigErrors = {};
  listeners.forEach((l, j) => {
    const first = listeners.slice(0, j).find((o) => o.proto === l.proto && o.port === l.port && l.port !== 0 && overlap(o.host, l.host));
    if (first) (errs[l.key] ??= []).push(`port ${l.port} is also the ${first.what} listener's (${first.key}); each listener needs its own port`);
  });
  return errs;
}
