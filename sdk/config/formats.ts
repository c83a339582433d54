import { FormatRegistry, Type, type StringOptions, type TString } from '@sinclair/typebox';
import { ipFamily } from '../ip.ts';

/*
 * What a config string means, in one place: TypeBox string formats every schema names (the kernel's
 * sections, the built-in plugins', a vendor's), so a value of the wrong form is refused where the
 * shape is checked: 400 on `PUT /api/v3/config` and a stopped boot, naming the key and the form
 * (`formatMessage`). Registered when this module loads (the SDK's config schemas import it).
 */

/**
 * The longest timer node runs as asked (2^31-1 ms, in seconds): a longer one fires at once, every millisecond.
 *
 * @example
 * const Config = Type.Object({ poll_seconds: Type.Integer({ default: 60, minimum: 1, maximum: MAX_TIMER_SECONDS }) });
 */
export const MAX_TIMER_SECONDS = 2_147_483;

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?';
const HOST_NAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*\\.?$`);
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A host name or an IP address (an IPv6 one bare or in brackets). */
function isHost(h: string): boolean {
  if (h.startsWith('[') && h.endsWith(']')) return ipFamily(h.slice(1, -1)) === 6;
  return ipFamily(h) !== 0 || HOST_NAME.test(h);
}

function isPort(p: string): boolean {
  return /^\d{1,5}$/.test(p) && Number(p) <= 65535;
}

/**
 * `host:port`; `:port` or a bare port = every interface; an IPv6 host bare (`::1:80`) or in brackets.
 *
 * @example
 * isListenAddress(':1935'); // true
 * isListenAddress('127.0.0.1'); // false: no port
 */
export function isListenAddress(s: string): boolean {
  if (isPort(s)) return true;
  const i = s.lastIndexOf(':');
  if (i < 0 || !isPort(s.slice(i + 1))) return false;
  const host = s.slice(0, i);
  return host === '' || isHost(host);
}

/** `host` or `host:port`, no scheme, no path. */
function isHostPort(s: string): boolean {
  if (isHost(s)) return true;
  const i = s.lastIndexOf(':');
  return i > 0 && isPort(s.slice(i + 1)) && isHost(s.slice(0, i));
}

function url(s: string, schemes: readonly string[]): URL | undefined {
  try {
    const u = new URL(s);
    return schemes.includes(u.protocol) && u.hostname !== '' && !/\s/.test(s) ? u : undefined;
  } catch {
    return undefined;
  }
}

/** `stun:host[:port]`, `turn:user:password@host[:port][?transport=udp|tcp]` (and `stuns:`, `turns:`). */
function isIceServer(s: string): boolean {
  const m = /^(stun|stuns|turn|turns):(?:([^@\s]+)@)?([^?@\s]+)(\?transport=(udp|tcp))?$/.exec(s);
  if (!m) return false;
  if (m[2] !== undefined && !m[1]!.startsWith('turn')) return false;
  return isHostPort(m[3]!);
}

interface ConfigFormat {
  /** The form, for messages: "'<value>' is not <expected>". */
  readonly expected: string;
  test(value: string): boolean;
}

/**
 * Every config string format, by name: what it accepts (`test`) and how a message names it (`expected`).
 *
 * @example
 * CONFIG_FORMATS['bind-ip'].test('127.0.0.1:5000'); // false
 */
export const CONFIG_FORMATS = {
  'listen-address': {
    expected: 'a host:port address (`:port` or a bare port: every interface; host: an IP address, [IPv6] or a host name; port: 0 to 65535)',
    test: isListenAddress,
  },
  'bind-ip': {
    expected: 'an IP address of this machine without a port (e.g. 127.0.0.1 or ::1), or empty for every interface',
    test: (s) => s === '' || ipFamily(s) !== 0,
  },
  ip: { expected: 'an IPv4 or IPv6 address without a port', test: (s) => ipFamily(s) !== 0 },
  'host-name': {
    expected: 'a host name or IP address (optionally with :port), without scheme or path',
    test: isHostPort,
  },
  endpoint: {
    expected: 'host or host:port without scheme or path (use_ssl picks http or https), or empty for AWS',
    test: (s) => s === '' || isHostPort(s),
  },
  'http-url': { expected: 'an http:// or https:// URL', test: (s) => url(s, ['http:', 'https:']) !== undefined },
  'http-url-or-empty': { expected: 'an http:// or https:// URL, or empty', test: (s) => s === '' || url(s, ['http:', 'https:']) !== undefined },
  'nats-url': {
    expected: 'a NATS server URL: nats://host:port (or tls://, ws://, wss://), or host:port',
    test: (s) => url(s, ['nats:', 'tls:', 'ws:', 'wss:']) !== undefined || isHostPort(s),
  },
  'ice-server': {
    expected: 'a STUN or TURN URL: stun:host[:port], stuns:host[:port], turn:user:password@host[:port] or turns:... (optionally ?transport=udp or tcp)',
    test: isIceServer,
  },
  'email-or-empty': { expected: 'an e-mail address (name@domain), or empty', test: (s) => s === '' || isEmail(s) },
  path: { expected: 'a file system path (no control characters such as a line break)', test: (s) => !CONTROL.test(s) },
} as const satisfies Record<string, ConfigFormat>;

export type ConfigFormatName = keyof typeof CONFIG_FORMATS;

/**
 * `name@domain.tld`: one `@` with something before it, no whitespace, a dot inside the domain; at
 * most 254 characters. Without a RegExp: `^[^@\s]+@[^@\s]+\.[^@\s]+$` backtracked 22 s on a
 * 128 K value of dots.
 */
function isEmail(s: string): boolean {
  if (s.length > 254 || /\s/.test(s)) return false;
  const at = s.indexOf('@');
  if (at <= 0 || s.indexOf('@', at + 1) >= 0) return false;
  return s.slice(at + 2, -1).includes('.');
}

for (const [name, f] of Object.entries(CONFIG_FORMATS)) if (!FormatRegistry.Has(name)) FormatRegistry.Set(name, f.test);

/**
 * A string schema of one of the config formats: a value of another form is refused where the
 * config's shape is checked (400 at `PUT /api/v3/config`, a stopped boot), naming the form.
 *
 * @example
 * const MyConfig = Type.Object({ address: Formatted('listen-address', ':9000'), callback: Formatted('http-url-or-empty', '') });
 */
export function Formatted(format: ConfigFormatName, defaultValue?: string, opts: StringOptions = {}): TString {
  return Type.String({ ...opts, format, ...(defaultValue !== undefined ? { default: defaultValue } : {}) });
}

/**
 * The message of a value that is not of its config format, or undefined for a format that is not
 * one of these.
 *
 * @example
 * formatMessage('ip', '1.2'); // "'1.2' is not an IPv4 or IPv6 address without a port"
 */
export function formatMessage(format: string | undefined, value: unknown): string | undefined {
  const f = format !== undefined ? (CONFIG_FORMATS as Record<string, ConfigFormat>)[format] : undefined;
  return f ? `'${String(value)}' is not ${f.expected}` : undefined;
}
