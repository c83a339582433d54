/*
 * Credentials out of what people read: log lines, events, URLs shown by the API. One function
 * for every place (the core's logger masks every line with it, the events plugin every event and
 * its webhook URLs), so a rule is written once.
 */

/**
 * `scheme://user:password@`: the user info of any URL in a text. The match starts at `://` and
 * looks back for the scheme: starting at the scheme scanned every run of scheme characters from
 * each of its positions (quadratic: a 60 KB URL of `a.` held a debug log line 2 s).
 */
const USERINFO = /(?<=\b[a-z][a-z0-9+.-]*):\/\/[^\s/?#@"'<>\\]+@/gi;

/**
 * Secret parameters in a query, an SRT `streamid` (`,token:T`, `#!::...,token=T`) or its
 * URL-encoded form (`%2Ctoken%3AT`): the name is kept, the value becomes `***`.
 */
const PARAMS = /([?&;,]|%2C|%26)(token|access_token|refresh_token|passphrase|password|passwd|pwd|pass|secret|api_?key)(=|:|%3A|%3D)(?:[^&\s"',#<>\\:]|:(?=[^\s]))*/gi;

/** Cheap test first: most texts hold neither. */
const MAYBE = /:\/\/[^\s/]*@|token|pass|pwd|secret|api_?key/i;

/**
 * The text with every URL's user info replaced by `***` (`rtmp://u:p@host/x` is shown with `***` for `u:p`) and the values of
 * secret parameters (`token`, `passphrase`, `password`, `pass`, `pwd`, `secret`, `api_key`, ... in
 * a query or an SRT stream id) by `***`. Anything else is left as it was, so it works on whole
 * URLs, on sentences that quote one (ffmpeg's `http://u:p@h/x: Connection refused`) and on JSON
 * text (a log line). A token that is a bare path element (`/live/x/T`) is not recognised.
 *
 * @example
 * const shown = maskCredentials('http://admin:pw@10.0.0.1/x.m3u8?token=abc');
 * // shown: the same URL with `***` for `admin:pw` and for `abc`
 */
export function maskCredentials(text: string): string {
  if (!MAYBE.test(text)) return text;
  return text.replace(USERINFO, '://***@').replace(PARAMS, '$1$2$3***');
}

/**
 * Every string in a JSON-like value masked (`maskCredentials`): a new value, the argument
 * untouched. Arrays and plain objects are copied (a cycle stays a cycle); anything else (a Date, a
 * Buffer, a class instance) is kept as it is.
 *
 * @example
 * ctx.log.info(maskDeep({ item: { url: 'http://u:p@cam/live.m3u8' } }), 'playlist item skipped');
 */
export function maskDeep<T>(value: T, copies = new Map<object, unknown>()): T {
  if (typeof value === 'string') return maskCredentials(value) as T;
  if (value === null || typeof value !== 'object') return value;
  const done = copies.get(value);
  if (done !== undefined) return done as T;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    copies.set(value, out);
    for (const v of value) out.push(maskDeep(v, copies));
    return out as T;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  copies.set(value, out);
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = maskDeep(v, copies);
  return out as T;
}
