/*
 * The DVR playlist of a stream (`dvr.m3u8`) over the last `windowMs`: while its packager runs, the
 * recording's segments up to the packager's DVR archive and then the archive (`dvr-archive.ts`: the
 * live edge is the packager's newest complete segment); else the recording's segments alone (a
 * sliding window by their public URLs, ended once the recording stops).
 */
import type { FsNode } from '../../sdk/index.ts';
import type { RecordingsService } from '../recordings/api.ts';
import { digest, NO_CACHE, playlistFile } from './answers.ts';
import { DvrArchive, deleteStaleArchives } from './dvr-archive.ts';
import type { Packager } from './packager.ts';

/** A running packager: its epoch names its files. */
export interface LivePackager { epoch: string; packager: Packager }

export class DvrPlaylists {
  /** The last answer of each stream, while its text is the same. */
  #kept = new Map<string, { text: string; node: FsNode }>();
  /**
   * The archive of each stream whose packager a DVR viewer asked for (`epoch` undefined: its
   * packager was replaced, the next one continues it).
   */
  #archives = new Map<string, { epoch: string | undefined; recording: string; archive: DvrArchive; off: () => void }>();
  /** Recordings whose archives a stopped service left were deleted (once per process). */
  #swept = new Set<string>();
  #max: number;
  #log: { warn(obj: object, msg: string): void };
  #now: () => number;

  /** `max`: streams whose last answer is kept (all forgotten beyond). */
  constructor(max: number, log: { warn(obj: object, msg: string): void }, now: () => number) {
    this.#max = max;
    this.#log = log;
    this.#now = now;
  }

  /** `name`'s DVR playlist from `now - windowMs`, or undefined when it has no recording. */
  answer(recs: RecordingsService | undefined, name: string, windowMs: number, live: LivePackager | undefined): FsNode | undefined {
    const rec = recs?.ofStream(name)[0];
    if (!recs || rec === undefined) return undefined;
    const now = this.#now();
    // an ended packager's archive ends the playlist (none is made for it)
    const ended = live?.packager.rendition.ended === true;
    const archive = live && (ended ? this.#archives.get(name)?.archive : this.#archive(recs, rec, name, live, windowMs));
    let text = archive?.text(now, ended);
    if (text === undefined) {
      const p = recs.playlist(rec, { kind: 'live', from: now - windowMs });
      if (!p.ok) return undefined;
      text = p.text;
    }
    // the same text while the window names the same segments: its answer is kept
    let kept = this.#kept.get(name);
    if (kept?.text !== text) {
      const data = Buffer.from(text);
      kept = { text, node: { kind: 'file', path: `/${name}/dvr.m3u8`, file: playlistFile(data, `"dvr-${digest(data)}"`, now, NO_CACHE) } };
      if (this.#kept.size >= this.#max) this.#kept.clear();
      this.#kept.set(name, kept);
    }
    return kept.node;
  }

  /** An archived file of `name`'s packager (`path` at the mount), or undefined. */
  open(name: string, path: string, file: string): Promise<FsNode | undefined> | undefined {
    return this.#archives.get(name)?.archive.open(path, file);
  }

  /**
   * `name`'s packager ended and a new one takes over (its publisher came back): the archive stays,
   * for the new packager to continue (`stopped` when none follows).
   */
  replaced(name: string): void {
    const held = this.#archives.get(name);
    if (!held || held.epoch === undefined) return;
    held.off();
    held.off = () => {};
    held.epoch = undefined;
  }

  /** `name`'s packager stopped for good: its archive's files go. */
  stopped(name: string): void {
    const held = this.#archives.get(name);
    if (!held) return;
    this.#archives.delete(name);
    held.off();
    held.archive.close();
  }

  #archive(recs: RecordingsService, rec: string, name: string, live: LivePackager, windowMs: number): DvrArchive | undefined {
    const held = this.#archives.get(name);
    if (held?.epoch === live.epoch) return held.archive;
    const p = live.packager;
    const take = (archive: DvrArchive) => () => archive.take(p.rendition, (f) => p.file(f), this.#now());
    if (held && held.epoch === undefined && held.recording === rec) {
      // the same recording, a new packager: its segments follow the ones archived
      held.archive.follow();
      held.epoch = live.epoch;
      held.off = p.onChange(take(held.archive));
      take(held.archive)();
      return held.archive;
    }
    this.stopped(name);
    const side = recs.sideFolder(rec, `cmaf-${live.epoch}`);
    if (!side) return undefined;
    if (!this.#swept.has(rec)) {
      this.#swept.add(rec);
      deleteStaleArchives(side, this.#log);
    }
    const archive = new DvrArchive({ recordings: recs, recording: rec, side, windowMs, log: this.#log });
    take(archive)();
    this.#archives.set(name, { epoch: live.epoch, recording: rec, archive, off: p.onChange(take(archive)) });
    return archive;
  }
}
