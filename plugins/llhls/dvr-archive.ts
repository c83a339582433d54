/*
 * One packaged stream's DVR archive (issue 47.4): each segment the packager completes (and its
 * init section) is written into a folder of the stream's recording (`RecordingsService.sideFolder`,
 * `<prefix>/<recording>/cmaf-<epoch>/`), so the DVR playlist can keep naming it after the packager
 * let it go. `DvrWindow` numbers the playlist; files older than the DVR window are deleted, and all
 * of them when the packager stops for good. A new packager of the same stream and recording (the
 * publisher came back) continues the archive (`follow`): the old segments keep their names and
 * numbers, the new ones follow after a discontinuity. A write the filesystem refuses is logged: its segment is served
 * from the packager while held, then answers 404. The recorded segments it lists are read from the
 * recording and remuxed to CMAF when asked (`dvr-recorded.ts`: bounded, the last few kept).
 */
import type { FsNode } from '../../sdk/index.ts';
import type { RecordedEntries, RecordingSideFolder, RecordingsService } from '../recordings/api.ts';
import { archivedNode, fileNode } from './answers.ts';
import { RecordedRemux } from './dvr-recorded.ts';
import { DvrWindow, recordedName, renderDvr } from './dvr-window.ts';
import type { PackagedFile } from './packager.ts';
import type { Rendition } from './playlist.ts';

export interface DvrArchiveOptions {
  recordings: RecordingsService;
  /** The stream's recording. */
  recording: string;
  side: RecordingSideFolder;
  windowMs: number;
  log: { warn(obj: object, msg: string): void };
}

/** A path as a glob that matches only itself (a recording's prefix may hold `*`, `[`, ...). */
const literalGlob = (path: string): string => path.replace(/[\\*?[\]{}()!+@|]/g, '\\$&');

/**
 * Deletes the files of the recording's archives other than `side`'s (`cmaf-*` beside it): those a
 * service that stopped left (a restart loses their index: they are never listed again). Once per
 * recording and process is enough: an archive deletes its own files when its packager stops.
 */
export function deleteStaleArchives(side: RecordingSideFolder, log: DvrArchiveOptions['log']): void {
  const { fs, dir } = side;
  const parent = dir.slice(0, dir.lastIndexOf('/'));
  void fs.list(`${literalGlob(parent)}/cmaf-*/*`).then(async (stale) => {
    for (const f of stale) if (!f.name.startsWith(`${dir}/`)) await fs.deleteFile(f.name);
  }).catch((err: unknown) => log.warn({ err, dir: parent }, 'the DVR archive could not delete an archive left behind'));
}

export class DvrArchive {
  readonly #o: DvrArchiveOptions;
  readonly #window = new DvrWindow();
  /** Files written (or being written), by name: their writes. */
  readonly #files = new Map<string, Promise<void>>();
  /** The newest segment taken of the packager it follows. */
  #last = -1;
  /** The next segment taken is a new packager's first: a discontinuity comes before it. */
  #fresh = false;
  #closed = false;
  /** Bumped when the archive takes a segment or lets one go. */
  #version = 0;
  #text: { text: string | undefined; version: number; ended: boolean; recorded: RecordedEntries | undefined; until: number } | undefined;
  /** The recorded segments it lists, as CMAF. */
  readonly #recordedRemux: RecordedRemux;

  constructor(o: DvrArchiveOptions) {
    this.#o = o;
    this.#recordedRemux = new RecordedRemux((start) => o.recordings.readSegment(o.recording, start));
  }

  /** Takes the rendition's complete segments not taken yet (and their init), then trims the window. */
  take(r: Rendition, file: (name: string) => PackagedFile | undefined, now: number): void {
    if (this.#closed) return;
    // from the first not taken (a change is a part: the newest segment is usually taken already)
    let i = r.segments.length;
    while (i > 0 && r.segments[i - 1]!.msn > this.#last) i--;
    for (; i < r.segments.length; i++) {
      const s = r.segments[i]!;
      const f = file(s.uri);
      const init = file(r.initUri);
      if (!f || !init) continue;
      const entries = this.#o.recordings.entries(this.#o.recording);
      this.#write(r.initUri, init.data);
      this.#write(s.uri, f.data);
      const discontinuity = s.discontinuity || this.#fresh;
      this.#window.add({ msn: s.msn, start: s.programDateTime ?? now, duration: s.duration, uri: s.uri, init: r.initUri, discontinuity }, entries?.list ?? []);
      this.#fresh = false;
      this.#last = s.msn;
      this.#version++;
    }
    const gone = this.#window.trim(now - this.#o.windowMs);
    if (gone.length === 0) return;
    this.#version++;
    const inits = new Set(this.#window.archived.map((a) => a.init));
    for (const g of gone) {
      this.#remove(g.uri);
      if (!inits.has(g.init)) this.#remove(g.init);
    }
  }

  /** The DVR playlist's text over the last `windowMs` (`ended`: the stream ended), or undefined when nothing is listed. */
  text(now: number, ended: boolean): string | undefined {
    // every viewer asks every segment or so: one text while the archive, the recording and the end
    // are the same, until the window's start passes the first recorded segment listed (the
    // archive's leave by `take`'s trim, which bumps the version)
    const e = this.#o.recordings.entries(this.#o.recording);
    const k = this.#text;
    if (k && k.version === this.#version && k.ended === ended && k.recorded === e && now < k.until) return k.text;
    const l = this.#window.listing(e?.list ?? [], e?.discBefore ?? 0, now - this.#o.windowMs, ended);
    const text = l && renderDvr(l);
    const first = l?.items[0];
    const until = first && recordedName(first.uri)?.kind === 'segment' ? first.start + first.duration * 1000 + this.#o.windowMs : Infinity;
    this.#text = { text, version: this.#version, ended, recorded: e, until };
    return text;
  }

  /** An archived file (`path` its path at the mount), from the recording's filesystem; undefined when it is not one. */
  async open(path: string, name: string): Promise<FsNode | undefined> {
    const rec = recordedName(name);
    if (rec) return this.#recorded(path, name, rec);
    if (!this.#files.has(name)) return undefined;
    const { fs, dir } = this.#o.side;
    if (fs.open) return archivedNode(path, name, await fs.open(`${dir}/${name}`));
    const data = await fs.readFile(`${dir}/${name}`);
    return data && fileNode(path, name, { data, mtimeMs: Date.now() });
  }

  /**
   * A recorded segment as CMAF, or its run's init section (from the run's first segment listed):
   * only of segments the window lists (a stranger's names cannot make the service remux the rest).
   */
  async #recorded(path: string, name: string, r: { kind: 'init' | 'segment'; at: number }): Promise<FsNode | undefined> {
    const list = this.#o.recordings.entries(this.#o.recording)?.list ?? [];
    const w = this.#window;
    let e: (typeof list)[number] | undefined;
    if (r.kind === 'init') e = list.find((x) => w.runOf(x.msn) === r.at);
    else {
      // from the newest: players ask for the window's, the index's newest segments
      let i = list.length - 1;
      while (i >= 0 && list[i]!.start > r.at) i--;
      e = list[i]?.start === r.at ? list[i] : undefined;
    }
    const got = e && w.runOf(e.msn) !== undefined ? await this.#recordedRemux.get(e.start) : undefined;
    if (!got) return undefined;
    return fileNode(path, name, { data: r.kind === 'init' ? got.init : got.fragment, mtimeMs: e!.start });
  }

  /**
   * A new packager of the stream (its publisher came back) feeds the archive from now on: its
   * segments follow the ones kept (names and numbers unchanged: a player that reloads across the
   * reconnect sees only segments added), after a discontinuity.
   */
  follow(): void {
    if (this.#closed) return;
    this.#last = -1;
    this.#fresh = this.#window.archived.length > 0;
    this.#version++;
  }

  /** The packager stopped for good: every archived file goes. */
  close(): void {
    this.#closed = true;
    for (const name of [...this.#files.keys()]) this.#remove(name);
  }

  #write(name: string, data: Buffer): void {
    if (this.#files.has(name)) return;
    const { fs, dir } = this.#o.side;
    const done = fs.writeFile(`${dir}/${name}`, data).then(() => {}, (err: unknown) => this.#o.log.warn({ err, file: name }, 'the DVR archive could not store a segment'));
    this.#files.set(name, done);
  }

  /** Deletes an archived file once its write is done (a delete before would leave it behind). */
  #remove(name: string): void {
    const written = this.#files.get(name);
    if (!written) return;
    this.#files.delete(name);
    const { fs, dir } = this.#o.side;
    void written.then(() => fs.deleteFile(`${dir}/${name}`)).catch(() => {});
  }
}
