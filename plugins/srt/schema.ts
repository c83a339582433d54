import { ConfigErrorList, SrtConfig as SrtSection, validAddress, type ConfigErrors } from '../../sdk/index.ts';

/** The plugin's settings: `srt` of the configuration (enable, address, passphrase, token, log). */
export const SrtConfig = SrtSection;
export type SrtConfig = SrtSection;

/** Rules a schema cannot state; keys relative to `srt`. */
export function validateSrt(s: SrtConfig): ConfigErrors {
  const errs = new ConfigErrorList();
  if (s.enable && !validAddress(s.address)) errs.add('address', `'${s.address}' is not a host:port address`);
  // libsrt takes 10 to 79 characters (PBKDF2 input); anything else fails every encrypted caller
  if (s.passphrase !== '' && (s.passphrase.length < 10 || s.passphrase.length > 79)) errs.add('passphrase', 'must be 10 to 79 characters (or empty for no encryption)');
  return errs.map;
}

/** `host:port` of `srt.address` for binding: no host means every IPv4 interface. */
export function bindAddress(address: string): { host: string; port: number } {
  const a = /^\d+$/.test(address) ? `:${address}` : address;
  const i = a.lastIndexOf(':');
  const host = a.slice(0, i).replace(/^\[|\]$/g, '');
  return { host: host === '' ? '0.0.0.0' : host, port: Number(a.slice(i + 1)) };
}

/** Host for local callers (`{srt}`): `localhost` when bound to every interface. */
export function callerHost(bindHost: string): string {
  if (bindHost === '0.0.0.0' || bindHost === '::' || bindHost === '') return 'localhost';
  return bindHost.includes(':') ? `[${bindHost}]` : bindHost;
}
