import t from 'tap';
import { DvrWindow, renderDvr, type RecordedEntry } from '../../../plugins/llhls/dvr-window.ts';
import { checkPlaylist, checkUpdate } from '../../../plugins/llhls/check.ts';
import { parsePlaylist } from '../../../plugins/llhls/check-parse.ts';

/*
 * The DVR window's numbering over a simulated timeline: a recording of 4 s MPEG-TS segments (with a
 * gap), then the packager's 1 s CMAF segments archived from t = 100 s (an init change at 130 s), the
 * window sliding 60 s behind: the recorded segments named as CMAF (`rec-<start>.m4s`) under one
 * init per run, every answer keeps the RFC's rules (the project's checker) and each
 * next answer only appends and removes from the start (`checkUpdate`), until the recorded part and
 * the archive's first segments have left.
 */

const T0 = 1_700_000_000_000;
const WINDOW_MS = 60_000;

/** The recording's index at `now` (s): 4 s segments from 0, a gap from 40 to 48 s, stored when complete. */
function recordedAt(now: number): RecordedEntry[] {
  const out: RecordedEntry[] = [];
  let msn = 0;
  for (let s = 0; s + 4 <= now; s += 4) {
    if (s >= 40 && s < 48) continue;
    out.push({ msn: msn++, start: T0 + s * 1000, duration: 4, discontinuity: s === 48 });
  }
  return out;
}

t.test('appends at the end, removes at the start, numbers never move', async (t) => {
  const w = new DvrWindow();
  let before: string | undefined;
  let answers = 0;
  let sawBoundary = false;
  let sawOnlyArchive = false;
  /** Each URI's init section the first time it was listed. */
  const mapOf = new Map<string, string>();
  const REC = /^rec-(\d+)\.m4s$/;
  for (let now = 101; now <= 260; now++) {
    const index = recordedAt(now);
    // the packager's segment that ended at `now` (from 100 s)
    const msn = 500 + (now - 101);
    const init = now - 1 < 130 ? 'e-init0.mp4' : 'e-init1.mp4';
    w.add({ msn, start: T0 + (now - 1) * 1000, duration: 1, uri: `e-${msn}.m4s`, init, discontinuity: now - 1 === 130 }, index);
    const from = T0 + now * 1000 - WINDOW_MS;
    w.trim(from);
    // the recordings drop what is older than the window from their index (retention)
    const kept = index.filter((r) => r.start + r.duration * 1000 > from - 20_000);
    const droppedDisc = index.filter((r) => !kept.includes(r) && r.discontinuity).length;
    const l = w.listing(kept, droppedDisc, from, false);
    if (!l) throw new Error(`nothing listed at ${now}`);
    const text = renderDvr(l);
    const bad = checkPlaylist(text);
    t.same(bad, [], `${now} s: the playlist keeps the rules`);
    if (before !== undefined) t.same(checkUpdate(before, text), [], `${now} s: an update of the one before`);
    const p = parsePlaylist(text);
    const uris = p.segments.map((s) => s.uri);
    if (uris.some((u) => REC.test(u)) && uris.some((u) => u.startsWith('e-'))) sawBoundary = true;
    if (!uris.some((u) => REC.test(u))) sawOnlyArchive = true;
    // no recorded segment after the archive began: the last recorded one ends by 100 s
    t.ok(!uris.some((u) => REC.test(u) && Number(REC.exec(u)![1]) + 4000 > T0 + 100_000), `${now} s: recorded only up to the archive`);
    // each segment under its own init section's EXT-X-MAP (init1 from the change at 130 s; the
    // recorded ones after the gap at 48 s, the run the window sees, under the init of that run)
    let map: string | undefined;
    const wrong: string[] = [];
    for (const line of text.split('\n')) {
      if (line.startsWith('#EXT-X-MAP:')) map = /URI="([^"]+)"/.exec(line)![1];
      const m = /^e-(\d+)\.m4s$/.exec(line);
      if (m && map !== (Number(m[1]) >= 530 ? 'e-init1.mp4' : 'e-init0.mp4')) wrong.push(`${line} under ${map}`);
      if (REC.test(line) && map !== `rec-${T0 + 48_000}-init.mp4`) wrong.push(`${line} under ${map}`);
      if (line.startsWith('#') || line === '') continue;
      if ((mapOf.get(line) ?? map) !== map) wrong.push(`${line} moved from ${mapOf.get(line)} to ${map}`);
      mapOf.set(line, map!);
    }
    t.same(wrong, [], `${now} s: every segment under its init section, never another`);
    before = text;
    answers++;
  }
  t.ok(sawBoundary, 'recorded then archived segments in one playlist');
  t.ok(sawOnlyArchive, 'then only the archive, once the recorded ones left');
  t.equal(answers, 160);
  const last = parsePlaylist(before!);
  t.equal(last.segments.length, 60, 'a 60 s window of 1 s segments');
  t.match(before!, /#EXT-X-MAP:URI="e-init1\.mp4"/, 'the first listed segment has its init section');
});

t.test('without a recording before it, the archive starts the playlist without a discontinuity', async (t) => {
  const w = new DvrWindow();
  w.add({ msn: 7, start: T0, duration: 1, uri: 'e-7.m4s', init: 'e-init0.mp4', discontinuity: false }, []);
  w.add({ msn: 8, start: T0 + 1000, duration: 1, uri: 'e-8.m4s', init: 'e-init0.mp4', discontinuity: false }, []);
  const text = renderDvr(w.listing([], 0, T0 - 60_000, true)!);
  t.same(checkPlaylist(text), []);
  t.notMatch(text, /DISCONTINUITY/, 'no discontinuity');
  t.match(text, /#EXT-X-MEDIA-SEQUENCE:0\n/, 'numbered from 0');
  t.match(text, /#EXT-X-VERSION:6\n/, 'version 6 for EXT-X-MAP');
  t.match(text, /#EXT-X-ENDLIST\n$/, 'ended');
  t.equal(new DvrWindow().listing([], 0, 0, false), undefined, 'nothing to list');
});
