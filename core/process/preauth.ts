import type { PlaceholderRun } from '../../sdk/index.ts';
import { runUserinfo, RUN_USER } from '../../sdk/run-credentials.ts';
import type { IOConfig } from './config-model.ts';

/*
 * Preemptive credentials for HLS outputs into the service's own mounts (issue 46.1). ffmpeg's HLS
 * muxer opens every upload (segment, playlist, DELETE) as a new HTTP request that does not know the
 * URL's credential is wanted: it asks without it, takes the 401 challenge, and asks again on a new
 * connection, so every upload cost the service two requests and two connections. The muxer passes
 * its `headers` option to every request it makes, so an HLS output whose address carries the run's
 * credential gets `Authorization: Basic ...` with that same credential (nothing the command line
 * did not already hold) in it, and the credential leaves its URLs: with a credential in the URL
 * ffmpeg would also ask `Expect: 100-continue` and wait for the answer before each body (and, for a
 * DELETE, read the final answer early and report the closed connection as an error). One request
 * per upload. The run's scope is still read from the resolved command with its credentials in the
 * URLs (`runFields`); only what ffmpeg is given differs.
 *
 * Where: an output of the HLS muxer (`-f hls`, or no `-f` and an address ending in `.m3u8`) gets
 * `-headers`; an HLS slave of a tee (`-f tee`, restreamer-ui's channels: `[f=hls:...]{memfs}/...`)
 * gets `headers=` in its options, escaped for the tee's two levels. Only where it cannot change what
 * ffmpeg does otherwise: no `headers` of the operator's own (a muxer without the option would
 * refuse to start, so never another muxer), every URL of the output or slave at the credential's
 * origin, and no `hls_key_info_file` (the muxer reads the key from where that file's contents say,
 * a URL the command does not show, with the same headers): the header never goes to another server.
 */

// the scheme bounded: `[a-z0-9+.-]*` scanned the rest of a long run from each of its positions
// (25 s on a 128 K option); a longer scheme than 64 characters is no URL's
const URL_IN = /[a-z][a-z0-9+.-]{0,63}:\/\/[^\s/?#]*/gi;

/** The authority (`scheme://userinfo@host:port`) of every URL in `text`. */
const authorities = (text: string): string[] => text.match(URL_IN) ?? [];

/** The origin `text` starts with when it carries `run`'s credential over HTTP, else undefined. */
function ownOrigin(text: string, run: PlaceholderRun): string | undefined {
  const own = authorities(text)[0];
  const ok = own && text.startsWith(own) && /^https?:/i.test(own) && own.includes(`//${runUserinfo(run)}`);
  return ok ? own : undefined;
}

const reEscape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Drops `run`'s userinfo (`process:<id>:<token>@`, escaped or not) from every URL in `text`. */
function withoutCredential(text: string, run: PlaceholderRun): string {
  // bounded: a userinfo of more than 512 characters is none of ours (an unbounded lazy run backtracked 2.4 s on `process` x 18,000)
  return text.replace(new RegExp(`${RUN_USER}[^@/\\s|[\\]]{0,512}?${reEscape(run.token)}@`, 'g'), '');
}

/** The header line of `run`'s Basic credential. */
function basicHeader(run: PlaceholderRun): string {
  return `Authorization: Basic ${Buffer.from(`${RUN_USER}:${run.processId}:${run.token}`, 'utf8').toString('base64')}\r\n`;
}

/**
 * Hides `run`'s credential in what a process shows (its running command, its log lines: ffmpeg
 * prints the URLs it opens, with `-loglevel debug` its request headers): the token and the Basic
 * value of its header become `***`. The API must not hand a child's credential to a caller, who
 * could use it while the run lives.
 */
export function runMask(run: PlaceholderRun): (text: string) => string {
  const basic = Buffer.from(`${RUN_USER}:${run.processId}:${run.token}`, 'utf8').toString('base64');
  return (text) => (text.includes(run.token) || text.includes(basic) ? text.replaceAll(run.token, '***').replaceAll(basic, '***') : text);
}

/** Options of the HLS muxer that keep the header out: the operator's own, and a key named by a file's contents. */
const KEEP_OUT = ['headers', 'hls_key_info_file'];

function muxerOf(o: IOConfig): string | undefined {
  const at = o.options.lastIndexOf('-f');
  if (at >= 0) return o.options[at + 1];
  return /\.m3u8(?:[?#]|$)/i.test(o.address) ? 'hls' : undefined;
}

/** Splits `text` at the unescaped `sep` characters (ffmpeg's `\` escapes kept as they are). */
function splitUnescaped(text: string, seps: string): string[] {
  const out: string[] = [];
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (seps.includes(text[i]!)) {
      out.push(text.slice(from, i));
      from = i + 1;
    }
  }
  out.push(text.slice(from));
  return out;
}

/** Drops one level of ffmpeg's `\` escapes. */
const unescape = (text: string): string => text.replace(/\\([\s\S])/g, '$1');

/** `text` escaped for one level of ffmpeg's tokens (`\` before each of `chars`). */
const escapeFor = (text: string, chars: RegExp): string => text.replace(chars, '\\$&');

/**
 * A tee slave `[opts]url` with `headers=` put first in its options when it is HLS into the run's own
 * origin. The slave's text has two levels of escapes: the tee's split at `|`, then its options'.
 */
function teeSlave(slave: string, run: PlaceholderRun, header: string): string {
  const text = unescape(slave);
  if (!text.startsWith('[')) return slave;
  const close = splitUnescaped(text, ']')[0]!.length;
  if (close >= text.length) return slave;
  const opts = splitUnescaped(text.slice(1, close), ':').map(unescape);
  if (!opts.includes('f=hls') || opts.some((o) => KEEP_OUT.some((k) => o.startsWith(`${k}=`)))) return slave;
  const own = ownOrigin(text.slice(close + 1), run);
  const foreign = (t: string) => authorities(t).some((a) => a !== own);
  if (!own || opts.some(foreign) || foreign(unescape(text.slice(1, close)))) return slave;
  // escaped for the options' level (`:`, `]`, `\`, quotes, and the line ends it would trim), then for the split's
  const value = escapeFor(escapeFor(header, /[:\]\\'\r\n]/g), /[\\|']/g);
  return `[headers=${value}:${withoutCredential(slave.slice(1), run)}`;
}

/** Output `o` with `run`'s Basic header where it may carry it (the same object when nowhere). */
export function preauthOutput(o: IOConfig, run: PlaceholderRun): IOConfig {
  const muxer = muxerOf(o);
  if (muxer === 'hls') {
    const own = ownOrigin(o.address, run);
    if (!own || KEEP_OUT.some((k) => o.options.includes(`-${k}`)) || o.options.some((text) => authorities(text).some((a) => a !== own))) return o;
    const options = o.options.map((text) => withoutCredential(text, run));
    return { ...o, address: withoutCredential(o.address, run), options: [...options, '-headers', basicHeader(run)] };
  }
  if (muxer !== 'tee') return o;
  const header = basicHeader(run);
  const address = splitUnescaped(o.address, '|').map((s) => teeSlave(s, run, header)).join('|');
  return address === o.address ? o : { ...o, address };
}

/** The outputs as ffmpeg is given them: the run's Basic header in the HLS ones that write into the service with its credential. */
export function preauthorize(outputs: readonly IOConfig[], run: PlaceholderRun | undefined): readonly IOConfig[] {
  return run ? outputs.map((o) => preauthOutput(o, run)) : outputs;
}
