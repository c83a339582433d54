import { ApiError, type ChildSpawnOptions, type StateDocument } from '../../../sdk/index.ts';
import type { Ffmpeg } from '../relay/ffmpeg.ts';
import { mediaMismatch, probeItem } from './probe.ts';
import { MAX_PLAYLISTS, NAME_PATTERN, type PlaylistFormat, type Playlist, type PlaylistBody, type StoredItem } from './schema.ts';
import { LOCAL_PROTOCOLS, resolveSource, type SourceRules } from './sources.ts';

/** The stored document: playlists by name. */
export interface PlaylistDoc { playlists: Record<string, Playlist> }

const bad = (reason: string) => new ApiError(400, 'Bad Request', [reason], 'PLAYLIST_INVALID');
const NAME = new RegExp(NAME_PATTERN);
/** `format` when a PUT leaves it out (documented in ../README.md). */
export const DEFAULT_FORMAT: PlaylistFormat = { width: 1280, height: 720, fps: 25, video_bitrate_kbit: 2500, audio_bitrate_kbit: 128 };
/** Items probed at once at insert. */
const PROBE_PARALLEL = 4;

/**
 * The playlists of `/api/v3/playlist`, kept in the plugin's state document (written atomically by
 * the state service). A PUT checks every item before anything is stored: disk paths must resolve
 * inside `storage.disk.dir` and probe (ffprobe, bounded in time), and with `mismatch: refuse` every
 * item (URLs too) must match the first one's codecs, size and frame rate.
 */
export class PlaylistStore {
  readonly #doc: StateDocument<PlaylistDoc>;
  readonly #rules: SourceRules;
  readonly #ffmpeg: Ffmpeg;

  constructor(doc: StateDocument<PlaylistDoc>, rules: SourceRules, ffmpeg: Ffmpeg) {
    this.#doc = doc;
    this.#rules = rules;
    this.#ffmpeg = ffmpeg;
  }

  list(): Playlist[] {
    return Object.values(this.#doc.data.playlists).sort((a, b) => a.name.localeCompare(b.name));
  }

  get(name: string): Playlist | undefined {
    return Object.hasOwn(this.#doc.data.playlists, name) ? this.#doc.data.playlists[name] : undefined;
  }

  /** Creates or replaces; 400 naming the item and the reason when an item is refused. */
  /**
   * `may`: whether the maker may read a disk file an item's playlist names (the items themselves: the route);
   * `disk`: what of the disk folder the probes reach (the caller's folders, `ChildSpawnOptions.disk`).
   */
  async put(name: string, body: PlaylistBody, may?: (diskPath: string) => boolean, disk?: ChildSpawnOptions['disk']): Promise<Playlist> {
    if (!NAME.test(name)) throw bad(`name: 1-64 of A-Z a-z 0-9 _ - . (not starting with .)`);
    if (!this.get(name) && Object.keys(this.#doc.data.playlists).length >= MAX_PLAYLISTS) {
      throw bad(`at most ${MAX_PLAYLISTS} playlists`);
    }
    const items = await this.#check(body, may, disk);
    const pl: Playlist = {
      name, items, loop: body.loop ?? true, shuffle: body.shuffle ?? false, mismatch: body.mismatch ?? 'normalise',
      format: { ...DEFAULT_FORMAT, ...body.format }, updated_at: Math.floor(Date.now() / 1000),
    };
    await this.#doc.commit(() => {
      const before = this.#doc.data.playlists[name];
      this.#doc.data.playlists[name] = pl;
      return () => { if (before) this.#doc.data.playlists[name] = before; else delete this.#doc.data.playlists[name]; };
    });
    return pl;
  }

  /** False when there was no such playlist. */
  async delete(name: string): Promise<boolean> {
    const before = this.get(name);
    if (!before) return false;
    await this.#doc.commit(() => {
      delete this.#doc.data.playlists[name];
      return () => { this.#doc.data.playlists[name] = before; };
    });
    return true;
  }

  async #check(body: PlaylistBody, may?: (diskPath: string) => boolean, disk?: ChildSpawnOptions['disk']): Promise<StoredItem[]> {
    const { binary, spawn } = this.#ffmpeg;
    const ffmpeg = disk ? { binary, spawn: ((file, args, o) => spawn(file, args, { ...o, disk })) satisfies Ffmpeg['spawn'] } : this.#ffmpeg;
    const items: StoredItem[] = body.items.map((it) => ({ ...it }));
    items.forEach((it, i) => {
      if (it.in !== undefined && it.out !== undefined && it.out <= it.in) throw bad(`items[${i}]: out (${it.out}) must be after in (${it.in})`);
    });
    const refuse = body.mismatch === 'refuse';
    const todo = items.map((it, i) => ({ it, i }));
    const probeOne = async ({ it, i }: { it: StoredItem; i: number }): Promise<void> => {
      // refused before anything reads it: nothing about a file out of bounds is probed or stored
      const r = resolveSource(this.#rules, it.source, may);
      if (!r.ok) throw bad(`items[${i}]: ${r.reason}`);
      if (r.url && !refuse) return;
      const media = await probeItem(ffmpeg, r.input, r.url ? [] : LOCAL_PROTOCOLS);
      if (typeof media === 'string') throw bad(`items[${i}]: ${it.source}: ${media.replaceAll(r.input, it.source)}`);
      it.media = media;
    };
    for (let k = 0; k < todo.length; k += PROBE_PARALLEL) await Promise.all(todo.slice(k, k + PROBE_PARALLEL).map(probeOne));
    if (refuse) {
      const first = items[0]?.media;
      items.forEach((it, i) => {
        const why = first && it.media ? mediaMismatch(first, it.media) : null;
        if (why) throw bad(`items[${i}]: ${it.source}: ${why} (items[0]); the playlist has mismatch: refuse`);
      });
    }
    return items;
  }
}
