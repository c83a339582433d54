/*
 * A media playlist parsed for the checker (`check.ts`): the header tags with their lines, the
 * segments with the tags before them and their parts, the trailing parts of the segment being
 * written, the preload hints. Lenient: what it cannot read becomes a `syntax` violation and the
 * rest is still read, so one bad line does not hide the others.
 */

export interface Violation {
  /** 1-based line of the playlist. */
  line: number;
  /** Stable rule id (`target-duration`, `part-target`, ...). */
  rule: string;
  message: string;
}

export interface ParsedPart { line: number; duration: number; uri: string; independent: boolean }

export interface ParsedSegment {
  /** Line of its `EXTINF`. */
  line: number;
  duration: number;
  uri: string;
  parts: ParsedPart[];
  discontinuity: boolean;
  /** ms since the epoch, with the line of its tag. */
  pdt: { ms: number; line: number } | undefined;
}

export interface Tag { line: number; value: string }

export interface ParsedPlaylist {
  first: string;
  tags: Map<string, Tag[]>;
  segments: ParsedSegment[];
  /** Parts after the last segment (the one being written), with its date and discontinuity. */
  openParts: ParsedPart[];
  openPdt: ParsedSegment['pdt'];
  openDiscontinuity: boolean;
  /** Line of the first segment or part (header tags belong before it). */
  firstMediaLine: number;
  hints: (Tag & { attrs: Map<string, string> })[];
  /** Line of the last `EXT-X-PART` or segment URI. */
  lastMediaLine: number;
  violations: Violation[];
}

const ATTR = /([A-Z0-9-]+)=("[^"]*"|[^,]*)(?:,|$)/y;

/** An attribute list (`A=1,B="x,y"`) as a map; quoted values without their quotes. */
export function attributes(text: string): Map<string, string> | undefined {
  const out = new Map<string, string>();
  ATTR.lastIndex = 0;
  while (ATTR.lastIndex < text.length) {
    const m = ATTR.exec(text);
    if (!m) return undefined;
    const v = m[2]!;
    out.set(m[1]!, v.startsWith('"') ? v.slice(1, -1) : v);
  }
  return out;
}

/** Tags of the header, kept with their lines for the rules. */
const HEADER = new Set(['EXT-X-VERSION', 'EXT-X-TARGETDURATION', 'EXT-X-MEDIA-SEQUENCE', 'EXT-X-DISCONTINUITY-SEQUENCE',
  'EXT-X-SERVER-CONTROL', 'EXT-X-PART-INF', 'EXT-X-SKIP', 'EXT-X-MAP', 'EXT-X-ENDLIST', 'EXT-X-PLAYLIST-TYPE', 'EXT-X-RENDITION-REPORT']);

interface Pending { parts: ParsedPart[]; discontinuity: boolean; pdt: ParsedSegment['pdt']; extinf: Tag | undefined }

function fresh(): Pending {
  return { parts: [], discontinuity: false, pdt: undefined, extinf: undefined };
}

function parsePart(p: ParsedPlaylist, line: number, value: string): ParsedPart | undefined {
  const a = attributes(value);
  const duration = Number(a?.get('DURATION'));
  const uri = a?.get('URI');
  if (!a || !(duration >= 0) || !uri) {
    p.violations.push({ line, rule: 'syntax', message: 'EXT-X-PART needs DURATION (a decimal) and URI' });
    return undefined;
  }
  return { line, duration, uri, independent: a.get('INDEPENDENT') === 'YES' };
}

/** One tag line into the parse; `pending` collects what belongs to the next segment. */
function tagLine(p: ParsedPlaylist, pending: Pending, line: number, text: string): void {
  const colon = text.indexOf(':');
  const name = colon < 0 ? text.slice(1) : text.slice(1, colon);
  const value = colon < 0 ? '' : text.slice(colon + 1);
  if (HEADER.has(name)) {
    const list = p.tags.get(name) ?? [];
    list.push({ line, value });
    p.tags.set(name, list);
  } else if (name === 'EXTINF') {
    if (pending.extinf) p.violations.push({ line: pending.extinf.line, rule: 'syntax', message: 'EXTINF without a URI after it' });
    pending.extinf = { line, value };
  } else if (name === 'EXT-X-PART') {
    const part = parsePart(p, line, value);
    if (part) pending.parts.push(part);
    if (p.firstMediaLine === 0) p.firstMediaLine = line;
    p.lastMediaLine = line;
  } else if (name === 'EXT-X-DISCONTINUITY') {
    pending.discontinuity = true;
  } else if (name === 'EXT-X-PROGRAM-DATE-TIME') {
    const ms = Date.parse(value);
    if (Number.isNaN(ms)) p.violations.push({ line, rule: 'syntax', message: `EXT-X-PROGRAM-DATE-TIME ${JSON.stringify(value)} is no date` });
    else pending.pdt = { ms, line };
  } else if (name === 'EXT-X-PRELOAD-HINT') {
    p.hints.push({ line, value, attrs: attributes(value) ?? new Map() });
  }
}

function uriLine(p: ParsedPlaylist, pending: Pending, line: number, text: string): Pending {
  if (!pending.extinf) {
    p.violations.push({ line, rule: 'syntax', message: 'a URI without EXTINF before it' });
    return fresh();
  }
  const duration = Number(pending.extinf.value.split(',')[0]);
  if (!(duration >= 0)) p.violations.push({ line: pending.extinf.line, rule: 'syntax', message: 'EXTINF needs a duration' });
  if (p.firstMediaLine === 0) p.firstMediaLine = pending.extinf.line;
  p.lastMediaLine = line;
  p.segments.push({ line: pending.extinf.line, duration, uri: text, parts: pending.parts, discontinuity: pending.discontinuity, pdt: pending.pdt });
  return fresh();
}

/** Parses a media playlist's text (LF or CRLF). */
export function parsePlaylist(text: string): ParsedPlaylist {
  const lines = text.split('\n');
  const p: ParsedPlaylist = {
    first: (lines[0] ?? '').replace(/\r$/, ''), tags: new Map(), segments: [], openParts: [], openPdt: undefined, openDiscontinuity: false,
    firstMediaLine: 0, hints: [], lastMediaLine: 0, violations: [],
  };
  let pending = fresh();
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!.replace(/\r$/, '').trim();
    if (text === '' || (text.startsWith('#') && !text.startsWith('#EXT'))) continue;
    if (text.startsWith('#')) tagLine(p, pending, i + 1, text);
    else pending = uriLine(p, pending, i + 1, text);
  }
  p.openParts = pending.parts;
  p.openPdt = pending.pdt;
  p.openDiscontinuity = pending.discontinuity;
  if (pending.extinf) p.violations.push({ line: pending.extinf.line, rule: 'syntax', message: 'EXTINF without a URI after it' });
  return p;
}
