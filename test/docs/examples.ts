/*
 * The runnable examples of the Markdown docs (issue 44.7). An example is a fenced block whose info
 * string is `http request`, followed by a block `json answer STATUS` or `text answer STATUS`
 * (optionally ending in `poll`: asked again until it matches, for answers that come once a stream
 * or a process is up). The request block is the request line, header lines, a blank line and the
 * body (JSON unless a `Content-Type` says otherwise). Requests carry the service's admin token
 * unless they show an `Authorization` header (`Authorization: none` sends none).
 *
 * An answer matches when its status is the one shown and, for JSON, every field shown is there
 * with the value shown: objects may hold more fields, `"..."` stands for any value, an array shown
 * with items needs each of them to match some item of the answer (`[]` only an empty array); for
 * text, every line shown but `...` is somewhere in the answer.
 *
 * A block `sh run` (must exit 0) or `sh run fails` (must not) is a command, run in its place in
 * the file's order: one `ffmpeg` command (lines may end in `\`, arguments may be quoted), whose
 * `rtmp://localhost:1935` and `srt://localhost:6000` are the test service's listeners.
 */

export interface Example {
  file: string;
  line: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
  status: number;
  kind: 'json' | 'text' | 'command';
  answer: string;
  poll: boolean;
}

interface Fence { info: string; body: string; line: number; end: number }

/** The fenced blocks of a Markdown text, with their info strings and first lines (1-based). */
export function fences(text: string): Fence[] {
  const lines = text.split('\n');
  const out: Fence[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const [, , ticks, info] = open;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i]!.trim().startsWith(ticks!); i++) body.push(lines[i]!.replace(/^\s{0,3}/, ''));
    out.push({ info: info!.trim(), body: body.join('\n'), line: start + 1, end: i + 1 });
  }
  return out;
}

/** Every example of a Markdown file; throws naming the line for a request without its answer. */
export function examples(file: string, text: string): Example[] {
  const all = fences(text);
  const out: Example[] = [];
  for (const [i, f] of all.entries()) {
    const run = /^sh run( fails)?$/.exec(f.info);
    if (run) {
      const argv = words(f.body);
      if (argv[0] !== 'ffmpeg') throw new Error(`${file}:${f.line}: a "sh run" block runs ffmpeg only, not ${JSON.stringify(argv[0])}`);
      out.push({ file, line: f.line, method: 'RUN', path: argv.join(' '), headers: {}, body: JSON.stringify(argv), status: run[1] ? 1 : 0, kind: 'command', answer: '', poll: false });
      continue;
    }
    if (f.info !== 'http request') continue;
    const next = all[i + 1];
    const m = next ? /^(json|text) answer (\d{3})( poll)?$/.exec(next.info) : null;
    if (!next || !m) throw new Error(`${file}:${f.line}: an http request block without a following "json answer STATUS" or "text answer STATUS" block`);
    const [head, ...rest] = f.body.split(/\n\s*\n/);
    const [requestLine, ...headerLines] = head!.split('\n');
    const rl = /^(GET|HEAD|POST|PUT|PATCH|DELETE) (\/\S*)$/.exec(requestLine!.trim());
    if (!rl) throw new Error(`${file}:${f.line}: the first line must be "METHOD /path", not ${JSON.stringify(requestLine)}`);
    const headers: Record<string, string> = {};
    for (const h of headerLines) {
      const hm = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(h.trim());
      if (!hm) throw new Error(`${file}:${f.line}: not a header line: ${JSON.stringify(h)}`);
      headers[hm[1]!.toLowerCase()] = hm[2]!;
    }
    const body = rest.length ? rest.join('\n\n') : undefined;
    out.push({ file, line: f.line, method: rl[1]!, path: rl[2]!, headers, body, status: Number(m[2]), kind: m[1] as 'json' | 'text', answer: next.body, poll: Boolean(m[3]) });
  }
  return out;
}

/** Why `actual` does not match the documented `shown` (a path and the difference), or undefined. */
export function mismatch(shown: unknown, actual: unknown, at = '$'): string | undefined {
  if (shown === '...') return actual === undefined ? `${at}: missing` : undefined;
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual)) return `${at}: expected an array, got ${JSON.stringify(actual)?.slice(0, 80)}`;
    if (shown.length === 0) return actual.length === 0 ? undefined : `${at}: expected [], got ${actual.length} items`;
    for (const [i, item] of shown.entries()) {
      if (!actual.some((a, j) => mismatch(item, a, `${at}[${j}]`) === undefined)) return `${at}[${i}]: no item of the answer matches ${JSON.stringify(item).slice(0, 120)}`;
    }
    return undefined;
  }
  if (shown !== null && typeof shown === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return `${at}: expected an object, got ${JSON.stringify(actual)?.slice(0, 80)}`;
    for (const [k, v] of Object.entries(shown)) {
      const why = mismatch(v, (actual as Record<string, unknown>)[k], `${at}.${k}`);
      if (why) return why;
    }
    return undefined;
  }
  return Object.is(shown, actual) ? undefined : `${at}: expected ${JSON.stringify(shown)}, got ${JSON.stringify(actual)?.slice(0, 120)}`;
}

/** Why a text answer lacks a shown line, or undefined. */
export function textMismatch(shown: string, actual: string): string | undefined {
  for (const line of shown.split('\n').map((l) => l.trim()).filter((l) => l && l !== '...')) {
    if (!actual.includes(line)) return `the answer has no line ${JSON.stringify(line)}`;
  }
  return undefined;
}

/** A command's words: `\`-newline joins lines, double or single quotes keep spaces. */
export function words(text: string): string[] {
  const out: string[] = [];
  const src = text.replace(/\\\n/g, ' ');
  for (const m of src.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) out.push(m[1] ?? m[2] ?? m[3]!);
  return out;
}
