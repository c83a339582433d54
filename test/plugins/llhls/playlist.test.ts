import t from 'tap';
import { checkPlaylist, checkUpdate } from '../../../plugins/llhls/check.ts';
import { Rendition, type RenditionOptions } from '../../../plugins/llhls/playlist.ts';
import { renderMedia, renderPlain, skippable } from '../../../plugins/llhls/playlist-render.ts';

/*
 * The media playlist builder (plugins/llhls/playlist*.ts): every state the packager can reach
 * renders a playlist the RFC 8216bis checker passes, in its LL, delta and plain forms.
 */
const T0 = Date.UTC(2024, 0, 1, 12, 0, 0);

function rendition(opts: Partial<RenditionOptions> = {}): Rendition {
  return new Rendition({ targetDuration: 2, partTarget: 0.5, window: 6, initUri: 'init.mp4', ...opts });
}

/** Adds `n` parts of `d` seconds to the open segment, the first independent, then the hint. */
function parts(r: Rendition, n: number, d = 0.5, independentFirst = true): void {
  for (let i = 0; i < n; i++) {
    const at = r.open.parts.length;
    const start = r.open.programDateTime ?? segmentStart(r);
    r.addPart({ duration: d, uri: `s${r.open.msn}.p${at}.m4s`, independent: independentFirst && at === 0 }, at === 0 ? start : undefined);
  }
  r.setHint(`s${r.open.msn}.p${r.open.parts.length}.m4s`);
}

function segmentStart(r: Rendition): number {
  const last = r.segments[r.segments.length - 1];
  return last ? last.programDateTime! + last.duration * 1000 : T0;
}

/** `n` complete segments of four 0.5 s parts. */
function segments(r: Rendition, n: number): void {
  for (let i = 0; i < n; i++) {
    parts(r, 4);
    r.closeSegment({ uri: `s${r.open.msn}.m4s` });
  }
}

function valid(t: { same(a: unknown, b: unknown, m: string): unknown; comment(m: string): void }, text: string, what: string): void {
  const found = checkPlaylist(text);
  t.same(found, [], `${what}: no violation`);
  if (found.length > 0) t.comment(text);
}

t.test('no parts yet: header, map and nothing else', async (t) => {
  const r = rendition();
  const text = renderMedia(r);
  valid(t, text, 'empty');
  t.match(text, /^#EXTM3U\n#EXT-X-VERSION:6\n#EXT-X-TARGETDURATION:2\n/);
  t.match(text, /#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL=12,PART-HOLD-BACK=1.5,HOLD-BACK=6\n/);
  t.match(text, /#EXT-X-PART-INF:PART-TARGET=0.5\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-MAP:URI="init.mp4"\n$/);
  t.notMatch(text, /EXT-X-DISCONTINUITY-SEQUENCE/);
});

t.test('one part: the part, then the hint of the next', async (t) => {
  const r = rendition();
  parts(r, 1);
  const text = renderMedia(r);
  valid(t, text, 'one part');
  t.match(text, /#EXT-X-PROGRAM-DATE-TIME:2024-01-01T12:00:00.000Z\n#EXT-X-PART:DURATION=0.5,URI="s0.p0.m4s",INDEPENDENT=YES\n#EXT-X-PRELOAD-HINT:TYPE=PART,URI="s0.p1.m4s"\n$/);
});

t.test('a segment boundary: the closed segment with its parts, the new one open', async (t) => {
  const r = rendition();
  segments(r, 1);
  parts(r, 1);
  const text = renderMedia(r);
  valid(t, text, 'boundary');
  t.match(text, /URI="s0.p3.m4s"\n#EXTINF:2,\ns0.m4s\n#EXT-X-PROGRAM-DATE-TIME:2024-01-01T12:00:02.000Z\n#EXT-X-PART:DURATION=0.5,URI="s1.p0.m4s",INDEPENDENT=YES\n#EXT-X-PRELOAD-HINT/);
  t.equal(r.lastMsn, 0);
});

t.test('video parts not all independent; a last short part of its segment', async (t) => {
  const r = rendition({ targetDuration: 2, partTarget: 0.4 });
  for (const d of [0.4, 0.4, 0.4, 0.4, 0.2]) r.addPart({ duration: d, uri: `v${r.open.parts.length}.m4s`, independent: r.open.parts.length === 0 }, T0);
  r.closeSegment({ uri: 'v.m4s' });
  parts(r, 2, 0.4);
  const text = renderMedia(r);
  valid(t, text, 'video');
  t.equal(text.match(/INDEPENDENT=YES/g)?.length, 2, 'only the parts that start with a keyframe');
  t.match(text, /#EXTINF:1.8,\nv.m4s/);
});

t.test('a segment longer than the target raises EXT-X-TARGETDURATION, never lowers it', async (t) => {
  const r = rendition({ partTarget: 0.5 });
  for (let i = 0; i < 7; i++) r.addPart({ duration: 0.5, uri: `p${i}.m4s`, independent: i === 0 }, T0);
  r.closeSegment({ uri: 'long.m4s' });
  t.equal(r.targetDuration, 4, '3.5 s rounds to 4');
  segments(r, 7);
  t.equal(r.segments[0]!.uri, 's2.m4s', 'the long one left the window');
  t.equal(r.targetDuration, 4);
  valid(t, renderMedia(r), 'after the long segment');
  t.match(renderMedia(r), /CAN-SKIP-UNTIL=24,PART-HOLD-BACK=1.5,HOLD-BACK=12/);
});

t.test('a window that slid: media sequence follows, old segments without parts', async (t) => {
  const r = rendition({ window: 5 });
  segments(r, 12);
  parts(r, 2);
  const text = renderMedia(r);
  valid(t, text, 'slid');
  t.match(text, /#EXT-X-MEDIA-SEQUENCE:7\n/);
  t.equal((text.match(/#EXTINF/g) ?? []).length, 5);
  // parts for segments ending within 3 target durations (6 s) of the end: the last 3 segments
  t.notMatch(text, /URI="s8.p0.m4s"/);
  t.match(text, /URI="s9.p0.m4s"/);
  const before = rendition({ window: 5 });
  segments(before, 11);
  t.same(checkUpdate(renderMedia(before), text), [], 'the update keeps the numbering');
});

t.test('discontinuities: tag before the segment, sequence counts those that left', async (t) => {
  const r = rendition({ window: 3 });
  segments(r, 2);
  r.markDiscontinuity();
  parts(r, 4);
  r.closeSegment({ uri: 'after-gap.m4s', programDateTime: T0 + 60_000 });
  segments(r, 1);
  const first = renderMedia(r);
  valid(t, first, 'with a discontinuity');
  t.match(first, /#EXT-X-DISCONTINUITY\n#EXT-X-PROGRAM-DATE-TIME:[^\n]+\n#EXT-X-PART:DURATION=0.5,URI="s2.p0.m4s"/);
  t.notMatch(first, /DISCONTINUITY-SEQUENCE/);
  segments(r, 3);
  const later = renderMedia(r);
  valid(t, later, 'after it left');
  t.match(later, /#EXT-X-DISCONTINUITY-SEQUENCE:1\n/);
  t.same(checkUpdate(first, later), []);
});

t.test('delta update: segments beyond the skip boundary become EXT-X-SKIP', async (t) => {
  const r = rendition({ window: 20 });
  segments(r, 12);
  parts(r, 1);
  t.equal(skippable(r), 6, 'the last 6 segments (12 s) plus the open part stay');
  const delta = renderMedia(r, { skip: 'YES' });
  valid(t, delta, 'delta');
  t.match(delta, /#EXT-X-VERSION:9\n/);
  t.match(delta, /#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-MAP:URI="init.mp4"\n#EXT-X-SKIP:SKIPPED-SEGMENTS=6\n/);
  t.equal((delta.match(/#EXTINF/g) ?? []).length, 6);
  const v2 = renderMedia(r, { skip: 'v2' });
  valid(t, v2, 'delta v2');
  t.match(v2, /#EXT-X-VERSION:10\n[\s\S]*SKIPPED-SEGMENTS=6,RECENTLY-REMOVED-DATERANGES=""/);
  const short = rendition();
  segments(short, 3);
  t.notMatch(renderMedia(short, { skip: 'YES' }), /EXT-X-SKIP/, 'nothing to skip: the whole playlist');
});

t.test('the plain playlist names the same segments, without LL tags', async (t) => {
  const r = rendition();
  segments(r, 4);
  parts(r, 2);
  const plain = renderPlain(r);
  valid(t, plain, 'plain');
  t.notMatch(plain, /EXT-X-PART|PRELOAD-HINT|SERVER-CONTROL/);
  t.equal((plain.match(/#EXTINF/g) ?? []).length, 4);
  r.end();
  t.match(renderPlain(r), /#EXT-X-ENDLIST\n$/);
  const ended = renderMedia(r);
  valid(t, ended, 'ended');
  t.match(ended, /s3.m4s\n#EXT-X-ENDLIST\n$/);
});

t.test('bad options are refused', async (t) => {
  t.throws(() => rendition({ partTarget: 0 }), RangeError);
  t.throws(() => rendition({ partTarget: 3, targetDuration: 2 }), RangeError);
});
