/*
 * The DVR window's numbering (pure: no clock, no I/O), the floor of the DVR playlist's live edge
 * (issue 47.4). The playlist lists the recording's segments up to where the packager's archive
 * begins, then the archive: the packager's own CMAF segments by their names, one URI each for good
 * (served from the packager while it holds them, from the recording's filesystem after), so every
 * answer only appends at the end and removes at the start (RFC 8216bis 6.2.1). The recorded
 * segments are named as CMAF too (`rec-<start>.m4s`, remuxed when read: `dvr-remux.ts`), with one
 * init per run of them without a gap (`rec-<run>-init.mp4`, `<run>` the start of the run's first
 * segment this window saw: fixed once given, so a segment's `EXT-X-MAP` never changes).
 *
 * Numbers: a recorded segment keeps the recordings' number (segments removed before it plus its
 * position); the archive's segments follow the last recorded one listed when the archive began
 * (fixed then: a recorded segment indexed later, or one that ends after the archive's start, is
 * never listed, so no number moves), each the one before's plus one, whichever packager made it (a
 * publisher that comes back continues the archive: its segments follow the old ones, which keep
 * their names and numbers). A discontinuity comes before the archive's first segment when
 * recorded ones come before it (another format, other timestamps), and wherever the archive put
 * one (the packager's own, a new packager's first). `EXT-X-DISCONTINUITY-SEQUENCE` counts the
 * discontinuities of the segments that left.
 */

/** A recorded segment (MPEG-TS) as the recordings number it (its DVR name: `recordedUri(start)`). */
export interface RecordedEntry {
  msn: number;
  /** Unix ms of its first frame. */
  start: number;
  /** Seconds. */
  duration: number;
  /** A discontinuity comes before it (a gap in the recording). */
  discontinuity: boolean;
}

/** A segment of the packager's archive. */
export interface ArchivedEntry {
  /** Its packager's media sequence number. */
  msn: number;
  start: number;
  duration: number;
  /** Its name (the packager's file name). */
  uri: string;
  /** Its initialization section's name. */
  init: string;
  discontinuity: boolean;
}

/** One line group of the DVR playlist. */
export interface DvrItem {
  uri: string;
  duration: number;
  start: number;
  discontinuity: boolean;
  /** `EXT-X-MAP` for it (and what follows, until the next): CMAF segments only. */
  map: string | undefined;
}

export interface DvrListing {
  firstMsn: number;
  discontinuitySequence: number;
  items: DvrItem[];
  ended: boolean;
}

/** The archive's place after the recorded segments, fixed when it begins. */
interface Base {
  /** The DVR number of the archive's first segment. */
  msn: number;
  /** The last recorded number listed (below `msn`). */
  lastRecorded: number;
}

/** An archived segment with its DVR number. */
export interface NumberedEntry extends ArchivedEntry {
  n: number;
}

/** A recorded segment's URI in the DVR playlist (relative to it). */
export const recordedUri = (start: number): string => `rec-${start}.m4s`;
/** The init section's URI of a run of recorded segments. */
export const runInitUri = (run: number): string => `rec-${run}-init.mp4`;
/** The run of a `rec-<run>-init.mp4` or the start of a `rec-<start>.m4s`, or undefined. */
export function recordedName(name: string): { kind: 'init' | 'segment'; at: number } | undefined {
  const m = /^rec-(\d{1,16})(-init\.mp4|\.m4s)$/.exec(name);
  return m ? { kind: m[2] === '.m4s' ? 'segment' : 'init', at: Number(m[1]) } : undefined;
}

export class DvrWindow {
  #base: Base | undefined;
  /** The run of each recorded segment seen, by number. */
  readonly #runs = new Map<number, number>();
  readonly #archived: NumberedEntry[] = [];
  /** Discontinuities of archived segments that left (the boundary's included). */
  #archivedGone = 0;
  /** Recorded ones came before the archive: its first segment follows a discontinuity. */
  #boundary = false;

  /** The archive's segments kept, oldest first. */
  get archived(): readonly NumberedEntry[] {
    return this.#archived;
  }

  /**
   * A packager's segment `seg` completed (each once: the archive takes them in order). The first one
   * fixes the archive's place: after the recorded segments of `recorded` (the recordings' index
   * now, oldest first) that end by its start; each next one takes the next number.
   */
  add(seg: ArchivedEntry, recorded: readonly RecordedEntry[]): void {
    if (!this.#base) {
      let last: RecordedEntry | undefined;
      for (const r of recorded) if (r.start + r.duration * 1000 <= seg.start + 1) last = r;
      this.#boundary = last !== undefined;
      const lastRecorded = last?.msn ?? -1;
      this.#base = { msn: lastRecorded + 1, lastRecorded };
    }
    // the trim keeps the newest: the next number follows it
    this.#archived.push({ ...seg, n: (this.#archived.at(-1)?.n ?? this.#base.msn - 1) + 1 });
  }

  /** The archive's segments that end before `from` (unix ms) leave; returns them (their files go). */
  trim(from: number): NumberedEntry[] {
    const gone: NumberedEntry[] = [];
    while (this.#archived.length > 1 && this.#archived[0]!.start + this.#archived[0]!.duration * 1000 <= from) {
      const s = this.#archived.shift()!;
      if (s.discontinuity || this.#firstGone(s)) this.#archivedGone++;
      gone.push(s);
    }
    return gone;
  }

  /** The archive's first segment carries the boundary's discontinuity (not its own flag twice). */
  #firstGone(s: NumberedEntry): boolean {
    return this.#boundary && s.n === this.#base!.msn;
  }

  /**
   * The listing over `from..`: `recorded` (the recordings' segments of the window, oldest first)
   * up to the archive, then the archive. `recordedDiscBefore`: the recordings' discontinuities of
   * segments numbered below `recorded[0]`. Undefined when it lists nothing.
   */
  listing(recorded: readonly RecordedEntry[], recordedDiscBefore: number, from: number, ended: boolean): DvrListing | undefined {
    const base = this.#base;
    const rec = recorded.filter((r) => r.start + r.duration * 1000 > from && (base === undefined || r.msn <= base.lastRecorded));
    this.#runsOf(recorded, rec);
    let init: string | undefined;
    const items: DvrItem[] = rec.map((r) => {
      const map = runInitUri(this.#runs.get(r.msn)!);
      const item = { uri: recordedUri(r.start), duration: r.duration, start: r.start, discontinuity: r.discontinuity, map: map === init ? undefined : map };
      init = map;
      return item;
    });
    for (const a of this.#archived) {
      const boundary = this.#boundary && a.n === base!.msn;
      items.push({ uri: a.uri, duration: a.duration, start: a.start, discontinuity: a.discontinuity || boundary, map: a.init === init ? undefined : a.init });
      init = a.init;
    }
    if (items.length === 0) return undefined;
    if (rec.length > 0) {
      // discontinuities of recorded segments that left the window before the first listed
      let disc = recordedDiscBefore;
      for (const r of recorded) if (r.msn < rec[0]!.msn && r.discontinuity) disc++;
      return { firstMsn: rec[0]!.msn, discontinuitySequence: disc, items, ended };
    }
    const first = this.#archived[0]!;
    // every recorded segment listed once has left: theirs, then the archive's that left
    let disc = recordedDiscBefore;
    for (const r of recorded) if (r.msn <= base!.lastRecorded && r.discontinuity) disc++;
    return { firstMsn: first.n, discontinuitySequence: disc + this.#archivedGone, items, ended };
  }

  /** The run of recorded segment `msn` (undefined when this window never listed it). */
  runOf(msn: number): number | undefined {
    return this.#runs.get(msn);
  }

  /**
   * Gives each recorded segment of the window (`rec`, out of `recorded`) its run: the one before
   * it's, unless a gap comes between; kept while it is listed.
   */
  #runsOf(recorded: readonly RecordedEntry[], rec: readonly RecordedEntry[]): void {
    const first = rec[0]?.msn ?? Infinity;
    for (const msn of this.#runs.keys()) if (msn < first) this.#runs.delete(msn);
    if (rec.length === 0 || this.#runs.has(rec.at(-1)!.msn)) return;
    let run: number | undefined;
    for (const r of recorded) {
      const known = this.#runs.get(r.msn);
      run = known ?? (run === undefined || r.discontinuity ? r.start : run);
      if (known === undefined && r.msn >= first) this.#runs.set(r.msn, run);
    }
  }
}

const seconds = (s: number) => String(Number(s.toFixed(3)));

/** The playlist text of a listing (`EXT-X-PROGRAM-DATE-TIME` on the first and after each discontinuity). */
export function renderDvr(l: DvrListing): string {
  let target = 1;
  for (const i of l.items) target = Math.max(target, Math.round(i.duration));
  const version = l.items.some((i) => i.map !== undefined) ? 6 : 3;
  const out = ['#EXTM3U', `#EXT-X-VERSION:${version}`, `#EXT-X-TARGETDURATION:${target}`, `#EXT-X-MEDIA-SEQUENCE:${l.firstMsn}`];
  if (l.discontinuitySequence > 0) out.push(`#EXT-X-DISCONTINUITY-SEQUENCE:${l.discontinuitySequence}`);
  l.items.forEach((i, n) => {
    if (i.discontinuity) out.push('#EXT-X-DISCONTINUITY');
    if (i.map !== undefined) out.push(`#EXT-X-MAP:URI="${i.map}"`);
    if (n === 0 || i.discontinuity) out.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(i.start).toISOString()}`);
    out.push(`#EXTINF:${seconds(i.duration)},`, i.uri);
  });
  if (l.ended) out.push('#EXT-X-ENDLIST');
  return out.join('\n') + '\n';
}
