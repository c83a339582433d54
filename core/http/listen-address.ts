import type { ConfigData } from '../config/config-data.ts';
import { parseAddress } from '../config/address.ts';

export interface ListenAddress {
  host: string;
  port: number;
  /** True when a host-less address was narrowed to loopback because API auth is off. */
  loopbackOnly: boolean;
}

/**
 * Where a listener of the API binds (`address`, `tls.address`). Safe by default: an address
 * without a host (the default `:8080`) means every interface only when `api.auth.enable` is on;
 * with auth off it binds 127.0.0.1, so a fresh `npm start` does not hand an open API to the
 * network. Writing the host (`0.0.0.0:8080`) is the operator's explicit choice and is obeyed.
 */
export function listenAddress(address: string, config: Pick<ConfigData, 'api'>): ListenAddress {
  const { host, port } = parseAddress(address);
  const hostless = /^:?\d+$/.test(address.trim());
  if (hostless && !config.api.auth.enable) return { host: '127.0.0.1', port, loopbackOnly: true };
  return { host, port, loopbackOnly: false };
}
