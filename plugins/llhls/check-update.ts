/*
 * What must hold between two answers of one media playlist (RFC 8216bis 6.2.1, 6.2.2): the media
 * sequence number never goes back, a number names the same segment in both, and the discontinuity
 * sequence grows by the discontinuities of the segments that left.
 */
import { attributes, parsePlaylist, type ParsedPlaylist, type Violation } from './check-parse.ts';

interface Numbered { first: number; skipped: number; disc: number; p: ParsedPlaylist }

function numbered(text: string): Numbered {
  const p = parsePlaylist(text);
  const int = (name: string): number => Number(p.tags.get(name)?.[0]?.value ?? 0) || 0;
  const skip = p.tags.get('EXT-X-SKIP')?.[0];
  const skipped = skip ? Number(attributes(skip.value)?.get('SKIPPED-SEGMENTS') ?? 0) || 0 : 0;
  return { first: int('EXT-X-MEDIA-SEQUENCE'), skipped, disc: int('EXT-X-DISCONTINUITY-SEQUENCE'), p };
}

/** The violations between an earlier and a later answer of the same playlist (lines of the later one). */
export function checkUpdate(before: string, after: string): Violation[] {
  const a = numbered(before);
  const b = numbered(after);
  const out: Violation[] = [];
  const msLine = b.p.tags.get('EXT-X-MEDIA-SEQUENCE')?.[0]?.line ?? 1;
  if (b.first < a.first) {
    out.push({ line: msLine, rule: 'media-sequence', message: `EXT-X-MEDIA-SEQUENCE went back from ${a.first} to ${b.first}` });
    return out;
  }
  // segments listed in both: the same number names the same URI
  const byMsn = new Map<number, string>();
  a.p.segments.forEach((s, i) => byMsn.set(a.first + a.skipped + i, s.uri));
  b.p.segments.forEach((s, i) => {
    const msn = b.first + b.skipped + i;
    const was = byMsn.get(msn);
    if (was !== undefined && was !== s.uri) {
      out.push({ line: s.line, rule: 'media-sequence', message: `segment ${msn} was ${was}, now ${s.uri}` });
    }
  });
  // the discontinuity sequence counts the discontinuities that left (known when none was skipped)
  if (a.skipped === 0 && b.first - a.first <= a.p.segments.length) {
    let left = 0;
    for (let i = 0; i < b.first - a.first; i++) if (a.p.segments[i]!.discontinuity) left++;
    if (b.disc !== a.disc + left) {
      const line = b.p.tags.get('EXT-X-DISCONTINUITY-SEQUENCE')?.[0]?.line ?? msLine;
      out.push({ line, rule: 'discontinuity-sequence', message: `EXT-X-DISCONTINUITY-SEQUENCE is ${b.disc}; ${a.disc} before plus ${left} discontinuities that left makes ${a.disc + left}` });
    }
  }
  return out;
}
