import type { Logger } from 'pino';
import type { PlaylistPlayState } from '../api.ts';
import type { Playlist, PlaylistFormat, StoredItem } from './schema.ts';
import { LOCAL_PROTOCOLS, resolveSource, type SourceRules } from './sources.ts';
import { diskItemPath } from './uses.ts';

/**
 * What the relay runs for one item: a label (the item's source), the source ffmpeg's arguments, and
 * the seconds of media it plays when the probe at insert knows them (disk items; cut to in/out).
 */
export interface FeedRun { url: string; args: string[]; duration?: number }

interface Picked { run: FeedRun; cur: { index: number; source: string; start: number; from: number } }

export interface FeedOptions {
  name: string;
  processId: string;
  playlist: (name: string) => Playlist | undefined;
  /** The disk root and the access lists, met again at every item start. */
  rules: SourceRules;
  log: Logger;
  emit?: (type: string, subject: Record<string, string>, payload: Record<string, unknown>) => void;
  /**
   * Whether the process's maker may read a disk file now (its disk path, `/a/x.mp4`;
   * `ProcessesService.makerMay`): asked at every item start for the item and for every file its
   * playlist names, so what the maker may no longer read is skipped.
   */
  may?: (diskPath: string) => boolean;
}

/** Skips remembered as reported at most (then forgotten at once: reported again, never unbounded). */
const REPORTED_MAX = 4096;

/**
 * The item sequence of one `playlist:<name>` input: the relay asks it for the next item's source
 * run each time one ends. The playlist is read from the store at every item, so a PUT takes effect
 * at the next item (the index carries on, clamped to the new length); `shuffle` draws a new order
 * for every pass; without `loop` the sequence ends after the last item (the relay then sends its
 * error frame). An item that cannot be read is skipped: a `warn` line and `playlist.item.skipped`
 * (once per item and reason until an item plays).
 */
export class PlaylistFeed {
  readonly #o: FeedOptions;
  #order: number[] = [];
  /** The stored playlist the order was drawn from: a PUT stores a new object, so identity tells an edit (within a second too). */
  #seen: Playlist | undefined;
  #at = 0;
  #current: Picked['cur'] | undefined;
  /** The item picked ahead by `prefetch`, the playlist version it was picked from, and the position before. */
  #prepared: { picked: Picked; from: Playlist; at: number } | undefined;
  #played = 0;
  #skipped = 0;
  /** Items in a row that failed: a whole pass of failures slows the retries down. */
  #failures = 0;
  /**
   * The skips reported (`source` and reason) since an item last played: a looping playlist whose
   * items all fail logs and emits each once, not once per pass (every 2 s while it runs).
   */
  readonly #reported = new Set<string>();

  constructor(o: FeedOptions) {
    this.#o = o;
  }

  /**
   * The next item's run, or undefined (no playlist, empty, or the end without loop). The item
   * picked by `prefetch` comes first (the same object), unless the playlist was edited since.
   */
  next(): FeedRun | undefined {
    const prep = this.#prepared;
    this.#prepared = undefined;
    const pl = this.#o.playlist(this.#o.name);
    if (prep && pl === prep.from) {
      this.#current = prep.picked.cur;
      return prep.picked.run;
    }
    if (prep) this.#at = prep.at; // edited meanwhile: pick again from the same place
    const picked = pl ? this.#pick(pl) : undefined;
    this.#current = picked?.cur;
    return picked?.run;
  }

  /** Picks the item after the current one now, so the relay can start it ahead (once per item). */
  prefetch(): FeedRun | undefined {
    if (this.#prepared) return this.#prepared.picked.run;
    const pl = this.#o.playlist(this.#o.name);
    if (!pl) return undefined;
    this.#sync(pl);
    const at = this.#at;
    const picked = this.#pick(pl);
    if (picked) this.#prepared = { picked, from: pl, at };
    return picked?.run;
  }

  #pick(pl: Playlist): Picked | undefined {
    if (pl.items.length === 0) return undefined;
    for (let tries = 0; tries < pl.items.length; tries++) {
      const index = this.#take(pl);
      if (index === undefined) return undefined;
      const item = pl.items[index]!;
      const may = this.#o.may;
      const path = diskItemPath(item.source);
      if (may && path !== undefined && !may(path)) {
        this.skipped(item.source, `${item.source}: its process's maker may not read it (no fs GET policy)`);
        continue;
      }
      const r = resolveSource(this.#o.rules, item.source, may);
      if (!r.ok) {
        this.skipped(item.source, r.reason);
        continue;
      }
      return {
        cur: { index, source: item.source, start: 0, from: item.in ?? 0 },
        run: { url: item.source, args: itemArgs(r.input, item, pl, r.url), duration: playedSeconds(item) },
      };
    }
    return undefined;
  }

  /** The current item delivered its first bytes. */
  started(): void {
    if (!this.#current || this.#current.start) return;
    this.#current.start = Date.now();
    this.#failures = 0;
    this.#reported.clear();
    this.#played++;
    this.#o.log.info({ playlist: this.#o.name, item: this.#current.source }, 'playlist item started');
    this.#o.emit?.('playlist.item.started', { process: this.#o.processId, playlist: this.#o.name }, { item: this.#current.source, index: this.#current.index });
  }

  /** The current item's run ended; `delivered` false: it could not be read. True when a pass failed in a row. */
  ended(delivered: boolean, reason: string): boolean {
    const cur = this.#current;
    this.#current = undefined;
    if (!delivered && cur) this.skipped(cur.source, reason);
    const pl = this.#o.playlist(this.#o.name);
    return this.#failures >= Math.max(1, pl?.items.length ?? 1);
  }

  skipped(source: string, reason: string): void {
    this.#skipped++;
    this.#failures++;
    const key = `${source}\0${reason}`;
    if (this.#reported.has(key)) return;
    // bounded by the playlist's items and their reasons; a bad one cannot grow it past a pass or two
    if (this.#reported.size >= REPORTED_MAX) this.#reported.clear();
    this.#reported.add(key);
    this.#o.log.warn({ playlist: this.#o.name, item: source }, `playlist item skipped: ${reason}`);
    this.#o.emit?.('playlist.item.skipped', { process: this.#o.processId, playlist: this.#o.name }, { item: source, reason });
  }

  status(): PlaylistPlayState {
    const pl = this.#o.playlist(this.#o.name);
    const cur = this.#current;
    const nextIndex = this.#prepared ? this.#prepared.picked.cur.index : pl ? this.#peek(pl) : undefined;
    return {
      name: this.#o.name, index: cur?.index ?? -1, current: cur?.source ?? null,
      position: cur?.start ? Math.round(((Date.now() - cur.start) / 1000 + cur.from) * 100) / 100 : 0,
      next: nextIndex === undefined ? null : pl!.items[nextIndex]?.source ?? null, played: this.#played, skipped: this.#skipped,
    };
  }

  /** The order of this pass, drawn again when the playlist changed or a pass ends. */
  #take(pl: Playlist): number | undefined {
    this.#sync(pl);
    if (this.#at >= this.#order.length) {
      if (!pl.loop && this.#played + this.#skipped > 0) return undefined;
      this.#order = order(pl);
      this.#at = 0;
    }
    return this.#order[this.#at++];
  }

  #peek(pl: Playlist): number | undefined {
    if (this.#seen !== pl || this.#order.length !== pl.items.length) return Math.min(this.#at, pl.items.length - 1);
    if (this.#at < this.#order.length) return this.#order[this.#at];
    return pl.loop && !pl.shuffle ? 0 : undefined;
  }

  #sync(pl: Playlist): void {
    if (this.#seen === pl && this.#order.length === pl.items.length) return;
    const first = this.#seen === undefined;
    this.#seen = pl;
    // an edit: the pass goes on from the same place in the new list
    const at = first ? 0 : Math.min(this.#at, pl.items.length);
    this.#order = order(pl);
    this.#at = at;
  }
}

/** Seconds an item plays: its probed duration cut to in/out; undefined when not probed. */
function playedSeconds(item: StoredItem): number | undefined {
  if (!item.media || !(item.media.duration > 0)) return undefined;
  const end = Math.min(item.out ?? item.media.duration, item.media.duration);
  return Math.max(0, end - (item.in ?? 0));
}

function order(pl: Playlist): number[] {
  const o = pl.items.map((_, i) => i);
  if (pl.shuffle) {
    for (let i = o.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [o[i], o[j]] = [o[j]!, o[i]!];
    }
  }
  return o;
}

/**
 * The source ffmpeg of one item: paced (`-re`), cut to in/out, copied or encoded to the playlist's
 * format; a local file (`url` false) may lead ffmpeg to files only, never to the network.
 */
export function itemArgs(input: string, item: StoredItem, pl: Playlist, url: boolean): string[] {
  const cut = [...(item.in ? ['-ss', String(item.in)] : []), ...(item.out ? ['-to', String(item.out)] : [])];
  const head = ['-hide_banner', '-nostdin', '-nostats', '-loglevel', 'info', '-re', ...cut, ...(url ? [] : LOCAL_PROTOCOLS), '-i', input];
  // one audio frame per PES: the splicer drops whole PES that would overlap the next item, so they stay short
  const tail = ['-flush_packets', '1', '-pes_payload_size', '0', '-f', 'mpegts', 'pipe:1'];
  if (pl.mismatch === 'refuse') return [...head, '-map', '0:v:0', '-map', '0:a:0?', '-c', 'copy', ...tail];
  return [...head, ...normalise(pl.format, item.media ? item.media.audio !== '' : true), ...tail];
}

function normalise(f: PlaylistFormat, audio: boolean): string[] {
  const { width: w, height: h, fps } = f;
  const video = `[0:v]scale=${w}:${h}:force_original_aspect_ratio=decrease,pad=${w}:${h}:(ow-iw)/2:(oh-ih)/2,setsar=1,fps=${fps},format=yuv420p[v]`;
  const sound = audio ? [] : ['-f', 'lavfi', '-i', 'anullsrc=r=48000:cl=stereo'];
  return [
    ...sound, '-filter_complex', video, '-map', '[v]', '-map', audio ? '0:a:0' : '1:a:0', ...(audio ? [] : ['-shortest']),
    '-c:v', 'libx264', '-preset', 'veryfast', '-profile:v', 'high', '-g', String(fps), '-keyint_min', String(fps), '-sc_threshold', '0',
    '-b:v', `${f.video_bitrate_kbit}k`, '-maxrate', `${f.video_bitrate_kbit}k`, '-bufsize', `${f.video_bitrate_kbit * 2}k`,
    '-c:a', 'aac', '-ar', '48000', '-ac', '2', '-b:a', `${f.audio_bitrate_kbit}k`,
  ];
}
