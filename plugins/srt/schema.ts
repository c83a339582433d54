import { Bool, ConfigErrorList, type ConfigErrors, Formatted, Int, List, section, type Static, Str } from '../../sdk/index.ts';

/** The plugin's settings: the `srt` section of the configuration, owned by this plugin (enable, address, passphrase, token, log, bounds). */
export const SrtConfig = section({
  enable: [Bool(false), 'Run the SRT server (plugin `srt`).'],
  address: [Formatted('listen-address', ':6000'), 'SRT listen address (UDP).'],
  passphrase: [Str(''), 'SRT encryption passphrase.'],
  token: [Str(''), 'Token publishers and players must give.'],
  log: section({ enable: [Bool(false), 'Log SRT events.'], topics: [List(), 'SRT log topics.'] }),
  handshake_timeout_seconds: [Int(5, { minimum: 1, maximum: 3600 }), 'Seconds an accepted SRT connection has to be admitted by the ingest hooks and, when it publishes, to send its first media; then it is closed.'],
  idle_timeout_seconds: [Int(10, { minimum: 1, maximum: 3600 }), 'Seconds of silence from an SRT peer (not even keep-alives) before its connection is broken; a publisher that sends no media for as long is closed too.'],
  // libsrt takes about 0.65 MiB per accepted connection (its buffers); the host gives it back after (addon/host.cc)
  max_connections: [Int(300, { minimum: 1, maximum: 1_000_000 }), 'Most SRT connections open at once (at most 1,000,000); more are refused in the handshake (reject 1402). Each costs libsrt about 0.65 MiB in the SRT host process while open (300: about 200 MiB), given back a few seconds after connections close.'],
  max_connections_per_address: [Int(20, { minimum: 1, maximum: 1_000_000 }), 'Most SRT connections open at once from one client address (at most 1,000,000) (IPv6: one /64); more are refused in the handshake (reject 1402). The service\'s own address (127.0.0.1, ::1: its processes) counts only toward the total.'],
  fail_delay_ms: [Int(1000, { minimum: 0, maximum: 3_600_000 }), 'After a wrong SRT token or passphrase, the client address is refused (reject 1402) for this long, doubling with each further failure (0 = never). The service\'s own address is never locked out.'],
  fail_delay_max_ms: [Int(30_000, { minimum: 0, maximum: 86_400_000 }), 'Longest lockout of a client address after repeated wrong SRT tokens or passphrases.'],
});
export type SrtConfig = Static<typeof SrtConfig>;

/** Rules a schema cannot state; keys relative to `srt`. */
export function validateSrt(s: SrtConfig): ConfigErrors {
  const errs = new ConfigErrorList();
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
