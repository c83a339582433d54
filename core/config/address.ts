/** Splits `host:port` (`:8080` or a bare `8080` = every interface, `[::1]:80` = IPv6). */
export function parseAddress(address: string): { host: string; port: number } {
  const a = /^\d+$/.test(address) ? `:${address}` : address;
  const i = a.lastIndexOf(':');
  const host = a.slice(0, i).replace(/^\[|\]$/g, '');
  return { host: host === '' ? '0.0.0.0' : host, port: Number(a.slice(i + 1)) };
}
