import type { Logger } from 'pino';
import {
  ApiError, findFilesystem, streamName, type CoreEvent, type EventsService, type EventSubscription, type FilesystemService, type PluginState, type StateDocument, type StreamTable,
} from '../../sdk/index.ts';
import { Recorder, type IndexData } from './recorder.ts';
import type { RecordingConfig, RecordingSettings, RecordingsConfig, RecordingView } from './schema.ts';
import type { Span } from './segments.ts';
import { tsCut, type TsCut } from './cut.ts';
import type { RecordedEntries, RecordedPlaylist, RecordedPlaylistAsk, RecordingSideFolder, RecordingsService } from './api.ts';
import { recordedEntries, recordedPlaylist } from './playlist.ts';

export interface RecordingsDeps {
  streams: StreamTable;
  filesystems: readonly FilesystemService[];
  state: PluginState;
  log: Logger;
  events?: EventsService;
  config: RecordingsConfig;
  now?: () => number;
}

const DEFAULTS = { filesystem: 'disk', prefix: '/recordings', segment_seconds: 4 };

const notFound = (name: string) => new ApiError(404, 'Unknown recording', [`no recording '${name}'`], 'RECORDING_NOT_FOUND');
const bad = (reason: string) => new ApiError(400, 'Bad Request', [reason], 'RECORDING_INVALID');

/**
 * The state document of a recording's index. The route's names (`[A-Za-z0-9][A-Za-z0-9_.-]{0,63}`)
 * may hold capitals and dots, which document names (`[a-z0-9][a-z0-9_-]*`) do not: such a name
 * is written as the hex of its bytes after `index--` (a name never starts with `-`, so this never
 * meets `index-<name>`, which the names documents can hold keep, as they always had).
 */
export function indexDocName(name: string): string {
  return /^[a-z0-9][a-z0-9_-]*$/.test(name) ? `index-${name}` : `index--${Buffer.from(name, 'utf8').toString('hex')}`;
}

/** A folder path: leading `/`, no `..`, no trailing `/` (the root is `/`). */
function cleanPrefix(p: string): string {
  const parts = p.split('/').filter((s) => s !== '' && s !== '.');
  if (parts.some((s) => s === '..')) throw bad('prefix must not contain ..');
  return '/' + parts.join('/');
}

/** The recordings: their stored settings, one `Recorder` each, retention, cuts. */
export class Recordings implements RecordingsService {
  readonly #d: RecordingsDeps;
  readonly #now: () => number;
  #doc!: StateDocument<{ recordings: RecordingConfig[] }>;
  readonly #recs = new Map<string, Recorder>();
  #closed = false;
  #lostSub: EventSubscription | undefined;
  /** Creates, replaces and deletes, one at a time: the limit and "exists" hold under concurrent requests. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(d: RecordingsDeps) {
    this.#d = d;
    this.#now = d.now ?? Date.now;
  }

  /** Opens the stored settings and indexes (no reading yet: `attachAll` once every plugin is mounted). */
  async open(): Promise<void> {
    this.#doc = await this.#d.state.open('recordings', { init: () => ({ recordings: [] }) });
    for (const cfg of this.#doc.data.recordings) this.#recs.set(cfg.name, await this.#recorder(cfg));
    this.#lostSub = this.#d.events?.subscribe({ types: ['fs.lost'] }, undefined, (e) => this.#lost(e));
  }

  /** `fs.lost` (a filesystem could not store a file it had answered for): the segment leaves its recording's index. */
  #lost(e: CoreEvent): void {
    const { filesystem, path } = e.subject;
    if (!filesystem || !path) return;
    const reason = typeof e.payload.reason === 'string' ? e.payload.reason : 'lost';
    for (const r of this.#recs.values()) {
      if (findFilesystem(this.#d.filesystems, r.cfg.filesystem)?.name !== filesystem) continue;
      // after the writes queued so far: the lost write may not be indexed yet
      r.after(() => r.lost(path, reason)).catch((err: unknown) => this.#d.log.error({ recording: r.cfg.name, err }, 'cannot drop a lost segment'));
    }
  }

  async #recorder(cfg: RecordingConfig): Promise<Recorder> {
    const doc = await this.#d.state.open<IndexData>(indexDocName(cfg.name), { init: () => ({ segments: [] }) });
    const c = this.#d.config;
    return new Recorder(cfg, doc, {
      streams: this.#d.streams, fs: (n) => findFilesystem(this.#d.filesystems, n), log: this.#d.log, events: this.#d.events,
      maxSegmentBytes: c.max_segment_mbytes * 1024 * 1024, maxEntries: c.max_index_entries, now: this.#now,
    });
  }

  /** Reads every recorded stream that is live (called on start and whenever the table changes). */
  attachAll(): void {
    if (this.#closed) return;
    for (const r of this.#recs.values()) r.attach();
  }

  /** Retention of every recording (the timer). */
  async retainAll(): Promise<void> {
    for (const r of [...this.#recs.values()]) await r.after(() => r.retain(this.#now()));
  }

  #get(name: string): Recorder {
    const r = this.#recs.get(name);
    if (!r) throw notFound(name);
    return r;
  }

  #settings(name: string, s: RecordingSettings): RecordingConfig {
    const cfg: RecordingConfig = {
      name, stream: s.stream.replace(/^\/+/, ''), filesystem: s.filesystem ?? DEFAULTS.filesystem,
      prefix: cleanPrefix(s.prefix ?? DEFAULTS.prefix), segment_seconds: s.segment_seconds ?? DEFAULTS.segment_seconds,
      retention: { max_age_seconds: s.retention?.max_age_seconds ?? 0, max_bytes: s.retention?.max_bytes ?? 0 },
    };
    if (!cfg.stream) throw bad('stream must not be empty');
    if (!findFilesystem(this.#d.filesystems, cfg.filesystem)) throw bad(`no filesystem '${cfg.filesystem}'`);
    return cfg;
  }

  /** Runs `fn` after the creates, replaces and deletes before it. */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Creates or replaces a recording; true when it is new. A replaced one restarts its reading. */
  put(name: string, s: RecordingSettings, create = false): Promise<boolean> {
    return this.#serial(() => this.#put(name, s, create));
  }

  async #put(name: string, s: RecordingSettings, create: boolean): Promise<boolean> {
    const cfg = this.#settings(name, s);
    const old = this.#recs.get(name);
    if (old && create) throw new ApiError(409, 'Conflict', [`recording '${name}' exists`], 'RECORDING_EXISTS');
    // its segments are where it wrote them: a new place would leave them unreadable and undeletable
    if (old && old.index.list.length > 0 && (old.cfg.filesystem !== cfg.filesystem || old.cfg.prefix !== cfg.prefix)) {
      throw new ApiError(409, 'Conflict', [`recording '${name}' has segments in ${old.cfg.filesystem}:${old.cfg.prefix}: its filesystem and prefix stay while it has any (delete it, or record into a new name)`], 'RECORDING_PLACE_FIXED');
    }
    if (!old && this.#recs.size >= this.#d.config.max_recordings) {
      throw new ApiError(429, 'Too Many Requests', [`at most ${this.#d.config.max_recordings} recordings`], 'RECORDING_LIMIT');
    }
    // its index first: settings are stored only for a recording that can run
    const rec = old ? undefined : await this.#recorder(cfg);
    const list = this.#doc.data.recordings;
    await this.#doc.commit(() => {
      const i = list.findIndex((c) => c.name === name);
      const before = i >= 0 ? list[i]! : undefined;
      if (i >= 0) list[i] = cfg; else list.push(cfg);
      return () => {
        const j = list.findIndex((c) => c.name === name);
        if (before) list[j] = before; else list.splice(j, 1);
      };
    });
    if (old) {
      old.detach('changed');
      old.cfg = cfg;
      old.attach();
      return false;
    }
    this.#recs.set(name, rec!);
    rec!.attach();
    return true;
  }

  /** Stops and forgets a recording; its segments are deleted unless `keepFiles`. */
  delete(name: string, keepFiles: boolean): Promise<void> {
    return this.#serial(() => this.#delete(name, keepFiles));
  }

  async #delete(name: string, keepFiles: boolean): Promise<void> {
    const r = this.#get(name);
    const list = this.#doc.data.recordings;
    await this.#doc.commit(() => {
      const i = list.findIndex((c) => c.name === name);
      const [gone] = list.splice(i, 1);
      return () => { list.splice(i, 0, gone!); };
    });
    this.#recs.delete(name);
    r.detach('deleted');
    if (!keepFiles) await r.purge();
    else await r.after(async () => { r.index.remove([...r.index.list]); });
    await r.close();
    // its index document goes too: one file per name a client ever used would stay otherwise
    await this.#d.state.remove(indexDocName(name));
  }

  view(name: string, range?: { start: number; end: number }): RecordingView {
    const r = this.#get(name);
    const c = r.cfg;
    const v: RecordingView = {
      name: c.name, stream: c.stream, filesystem: c.filesystem, prefix: c.prefix, segment_seconds: c.segment_seconds,
      retention: { ...c.retention }, recording: r.recording, storing: r.storing, segments: r.index.list.length, bytes: r.index.bytes,
    };
    if (range) v.spans = r.index.spans(range.start, range.end).map(spanView);
    return v;
  }

  /** Names of the recordings of `stream` (its table name), recording ones first. */
  ofStream(stream: string): string[] {
    const mine = [...this.#recs.values()].filter((r) => streamName(r.cfg.stream) === streamName(stream));
    return mine.sort((a, b) => Number(b.recording) - Number(a.recording) || a.cfg.name.localeCompare(b.cfg.name)).map((r) => r.cfg.name);
  }

  /** The HLS playlist of a recording's segments (`RecordingsService.playlist`). */
  playlist(name: string, ask: RecordedPlaylistAsk): RecordedPlaylist {
    const r = this.#recs.get(name);
    if (!r) return { ok: false, code: 'RECORDING_NOT_FOUND', reason: `no recording '${name}'` };
    return recordedPlaylist(r.index, findFilesystem(this.#d.filesystems, r.cfg.filesystem), r.recording, ask);
  }

  /** A recording's segments by number (`RecordingsService.entries`). */
  entries(name: string): RecordedEntries | undefined {
    const r = this.#recs.get(name);
    const fs = r && findFilesystem(this.#d.filesystems, r.cfg.filesystem);
    return r && fs?.publicMount ? recordedEntries(r.index, r.recording) : undefined;
  }

  /** A recorded segment's bytes (`RecordingsService.readSegment`): found from the newest (what DVR players ask for). */
  async readSegment(name: string, start: number): Promise<Buffer | undefined> {
    const r = this.#recs.get(name);
    const fs = r && findFilesystem(this.#d.filesystems, r.cfg.filesystem);
    const list = r?.index.list ?? [];
    let i = list.length - 1;
    while (i >= 0 && list[i]!.start > start) i--;
    return fs && list[i]?.start === start ? fs.readFile(list[i]!.file) : undefined;
  }

  /** A folder beside a recording's segments (`RecordingsService.sideFolder`). */
  sideFolder(name: string, what: string): RecordingSideFolder | undefined {
    const r = this.#recs.get(name);
    const fs = r && findFilesystem(this.#d.filesystems, r.cfg.filesystem);
    return r && fs && { fs, dir: `${r.cfg.prefix === '/' ? '' : r.cfg.prefix}/${name}/${what}` };
  }

  list(): RecordingView[] {
    return [...this.#recs.keys()].sort().map((n) => this.view(n));
  }

  /** The TS cut of `[start, start + durationMs)`; 404 when nothing was recorded there. */
  async cut(name: string, start: number, durationMs: number): Promise<TsCut> {
    const r = this.#get(name);
    const segs = r.index.covering(start, durationMs);
    const fs = findFilesystem(this.#d.filesystems, r.cfg.filesystem);
    const cut = segs.length > 0 && fs ? await tsCut(fs, segs, start, start + durationMs) : undefined;
    if (!cut) throw new ApiError(404, 'Not Found', ['nothing was recorded in this range'], 'RECORDING_NO_MEDIA');
    return cut;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#lostSub?.close();
    await Promise.all([...this.#recs.values()].map((r) => r.close()));
  }
}

function spanView(s: Span): { start: string; start_ms: number; duration: number } {
  return { start: new Date(s.start).toISOString(), start_ms: s.start, duration: s.duration / 1000 };
}
