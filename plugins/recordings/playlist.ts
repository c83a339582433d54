/*
 * Recorded segments as an HLS media playlist (RFC 8216bis): MPEG-TS segments by their public
 * URLs, `EXT-X-PROGRAM-DATE-TIME` on the first and after every gap (a player seeks by clock
 * time), `EXT-X-DISCONTINUITY` at every gap (segments more than `JOIN_MS` apart: another
 * publish, other timestamps). Pure.
 */
import type { FilesystemService } from '../../sdk/index.ts';
import type { RecordedEntries, RecordedPlaylist, RecordedPlaylistAsk } from './api.ts';
import { isGap, type Segment, type SegmentIndex } from './segments.ts';

/** Segments one playlist names at most (a longer range is refused: ask for a narrower one). */
export const MAX_PLAYLIST_SEGMENTS = 20_000;

export interface RecordedRender {
  /** `EXT-X-MEDIA-SEQUENCE`: the number of the first segment. */
  firstMsn: number;
  /** `EXT-X-DISCONTINUITY-SEQUENCE`. */
  discontinuitySequence: number;
  /** `vod`: `EXT-X-PLAYLIST-TYPE:VOD` and the end; `live`: the end only when `ended`. */
  kind: 'vod' | 'live';
  ended: boolean;
  /** The public URL of a segment's file. */
  url(file: string): string;
}

const seconds = (ms: number) => String(Number((ms / 1000).toFixed(3)));

/** The playlist text of `segs` (sorted by start, not empty). */
export function renderRecorded(segs: readonly Segment[], o: RecordedRender): string {
  let target = 1;
  for (const s of segs) target = Math.max(target, Math.round(s.duration / 1000));
  const out = ['#EXTM3U', '#EXT-X-VERSION:3', `#EXT-X-TARGETDURATION:${target}`, `#EXT-X-MEDIA-SEQUENCE:${o.firstMsn}`];
  if (o.discontinuitySequence > 0) out.push(`#EXT-X-DISCONTINUITY-SEQUENCE:${o.discontinuitySequence}`);
  if (o.kind === 'vod') out.push('#EXT-X-PLAYLIST-TYPE:VOD');
  let prev: Segment | undefined;
  for (const s of segs) {
    const gap = prev !== undefined && isGap(prev, s);
    if (gap) out.push('#EXT-X-DISCONTINUITY');
    if (prev === undefined || gap) out.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(s.start).toISOString()}`);
    out.push(`#EXTINF:${seconds(s.duration)},`, o.url(s.file));
    prev = s;
  }
  if (o.kind === 'vod' || o.ended) out.push('#EXT-X-ENDLIST');
  return out.join('\n') + '\n';
}

/** Gaps (discontinuities) among the first `n` segments of `segs`. */
export function gapsBefore(segs: readonly Segment[], n: number): number {
  let gaps = 0;
  for (let i = 1; i < n && i < segs.length; i++) if (isGap(segs[i - 1]!, segs[i]!)) gaps++;
  return gaps;
}

/**
 * The playlist of `index`'s segments in the asked range, named by their URLs on `fs`'s public
 * mount; `recording`: the recorder still records (a live playlist goes on).
 */
export function recordedPlaylist(index: SegmentIndex, fs: FilesystemService | undefined, recording: boolean, ask: RecordedPlaylistAsk): RecordedPlaylist {
  if (!fs?.publicMount) return { ok: false, code: 'RECORDING_NOT_PUBLIC', reason: 'its filesystem has no public mount' };
  const from = ask.from ?? -Infinity;
  const to = ask.to ?? Infinity;
  const list = index.list;
  let first = 0;
  while (first < list.length && list[first]!.start + list[first]!.duration <= from) first++;
  let last = first;
  while (last < list.length && list[last]!.start < to) last++;
  if (last === first) return { ok: false, code: 'RECORDING_NO_MEDIA', reason: 'nothing was recorded in this range' };
  if (last - first > MAX_PLAYLIST_SEGMENTS) {
    return { ok: false, code: 'RECORDING_PLAYLIST_TOO_LONG', reason: `more than ${MAX_PLAYLIST_SEGMENTS} segments: ask for a narrower range` };
  }
  // the same segments, numbers and end give the same text: the last one is kept per index (DVR
  // players ask again every segment or so)
  const key = `${ask.kind}|${first}|${last}|${index.dropped}|${recording}|${fs.mount}`;
  const kept = rendered.get(index);
  if (kept?.key === key) return kept.result;
  const prefix = fs.mount === '/' ? '' : fs.mount;
  const text = renderRecorded(list.slice(first, last), {
    firstMsn: index.dropped + first, discontinuitySequence: index.droppedGaps + gapsBefore(list, first + 1), kind: ask.kind, ended: !recording,
    url: (file) => encodeURI(prefix + file),
  });
  const result: RecordedPlaylist = { ok: true, text, segments: last - first };
  rendered.set(index, { key, result });
  return result;
}

const rendered = new WeakMap<SegmentIndex, { key: string; result: RecordedPlaylist }>();

/**
 * Every segment of `index` by number (the DVR playlist's recorded part): the same object while the
 * index stays the same (each DVR answer asks; the index changes once a segment).
 */
export function recordedEntries(index: SegmentIndex, recording: boolean): RecordedEntries {
  const key = `${index.dropped}|${index.list.length}|${index.list.at(-1)?.start}|${index.list.at(-1)?.duration}|${recording}`;
  const kept = entriesKept.get(index);
  if (kept?.key === key) return kept.entries;
  const list = index.list.map((s, i) => ({
    msn: index.dropped + i, start: s.start, duration: s.duration / 1000, discontinuity: i > 0 && isGap(index.list[i - 1]!, s),
  }));
  const entries = { list, discBefore: index.droppedGaps, recording };
  entriesKept.set(index, { key, entries });
  return entries;
}

const entriesKept = new WeakMap<SegmentIndex, { key: string; entries: RecordedEntries }>();
