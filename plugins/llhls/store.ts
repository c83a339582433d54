/*
 * The LL-HLS filesystem `llhls`: what the core's file door serves at `/hls`. A path is
 * `/<stream>/<file>` (the stream's table name may hold slashes: `/live/abc/index.m3u8`):
 * - `index.m3u8`: the low-latency playlist, with blocking reload (`_HLS_msn`, `_HLS_part`) and
 *   delta updates (`_HLS_skip`); `plain.m3u8`: the same segments without LL tags;
 * - `<epoch>-init<n>.mp4`, `<epoch>-<msn>.<part>.m4s`, `<epoch>-<msn>.m4s`: the init section, the
 *   parts and the segments (immutable); a request for the hinted part waits for it.
 * Packaging a stream starts with the first request of one of its playlists (when it is live) and
 * stops `idleMs` after the last request of any of its files. No I/O here but the stream table;
 * the plugin's `index.ts` runs the sweep timer.
 */
import { randomBytes } from 'node:crypto';
import { siblingModule, type FilesystemService, type FsFile, type FsFileInfo, type FsNode, type FsOpenHint, type FsPublicMount,
  type FsWriteResult, type StreamReader, type StreamTable } from '../../sdk/index.ts';
import type { LaddersService } from '../ladders/api.ts';
import type { RecordingsService } from '../recordings/api.ts';
import { digest, fileNode, info, NO_CACHE, playlistFile } from './answers.ts';
import { DvrPlaylists } from './dvr.ts';
import { llhlsErrors } from './errors.ts';
import { LlhlsFeed, type StreamTexts } from './feed.ts';
import { bitrates, renderMultivariant, reportOf, variantOf, type Variant } from './multivariant.ts';
import { Packager, type PackagedFile } from './packager.ts';
import { decideReload, isReady, type Skip } from './playlist-reload.ts';
import { renderMedia, renderPlain } from './playlist-render.ts';
import { viewMessage } from './view-state.ts';
import type { Viewers } from './viewers.ts';
import { checkToken } from './token.ts';

/** The store's bounds and the packagers' settings (from the config section). */
export interface LlhlsSettings {
  targetDuration: number;
  partTarget: number;
  windowSegments: number;
  /** Bytes of segments one stream keeps at most. */
  maxStreamBytes: number;
  /** Streams packaged at once; a request for one more is refused 503. */
  maxStreams: number;
  /** Packaging stops this long after the last request of a stream's files. */
  idleMs: number;
  /** How long a first playlist request waits for the first segment. */
  startWaitMs: number;
  /** The token a playlist request must carry (`?token=`); empty: none. */
  token: string;
  /** How far back the DVR playlist (`dvr.m3u8`, from the recordings) reaches. */
  dvrWindowMs: number;
}

interface LlhlsDeps {
  streams: StreamTable;
  /** The recordings plugin's service, when it runs: the DVR playlist. */
  recordings?: RecordingsService;
  /** The ladders plugin's service, when it runs: the multivariant playlist's renditions. */
  ladders?: LaddersService;
  log: { warn(obj: object, msg: string): void };
  /** The viewers' admission (the `prePlay` taps), asked by every playlist request with a client. */
  viewers?: Viewers;
  now?: () => number;
}

interface Entry {
  name: string;
  /** Random: the prefix of every file name of its packager, so names cannot be guessed. */
  epoch: string;
  packager: Packager;
  reader: StreamReader | undefined;
  used: number;
  /** Rendered playlists of the packager's current version, by kind. */
  rendered: Map<string, FsFile>;
  renderedAt: number;
}

const PLAYLISTS = new Set(['index.m3u8', 'plain.m3u8']);

/** The `llhls` filesystem: packagers by stream, served read-only at `/hls`. */
export class LlhlsStore implements FilesystemService {
  readonly name = 'llhls';
  readonly type = 'llhls';
  readonly mount = '/hls';
  /** Its view by request: main's; in the serving threads `view.ts`, over the feed's copy. */
  readonly publicMount: FsPublicMount;
  #entries = new Map<string, Entry>();
  #s: LlhlsSettings;
  #d: LlhlsDeps;
  #now: () => number;
  #seq = 0;
  #dvrs: DvrPlaylists;
  /**
   * For the serving threads' copies: the files of every packager (inits, parts, segments), the
   * admitted viewers, and the states of the streams their views ask for (`feed.ts`).
   */
  readonly changes: LlhlsFeed;

  constructor(deps: LlhlsDeps, settings: LlhlsSettings) {
    this.#d = deps;
    this.#s = settings;
    this.#now = deps.now ?? Date.now;
    this.#dvrs = new DvrPlaylists(settings.maxStreams, deps.log, this.#now);
    const view = { url: siblingModule('./view.ts', import.meta.url), init: { token: settings.token } };
    this.publicMount = { defaultType: 'application/octet-stream', preflight: true, asks: true, view };
    this.changes = new LlhlsFeed({
      files: () => this.#packaged(), now: this.#now, keepMs: settings.idleMs,
      onVersion: (name, fn) => this.#entries.get(name)?.packager.onChange(fn), texts: (name) => this.#texts(name),
    });
  }

  open(path: string, hint?: FsOpenHint): FsNode | undefined | Promise<FsNode | undefined> {
    const slash = path.lastIndexOf('/');
    if (slash <= 0) return undefined;
    const name = path.slice(1, slash);
    const file = path.slice(slash + 1);
    if (file === 'dvr.m3u8') return this.#dvr(name, hint?.query ?? '', hint?.remote);
    if (file === 'master.m3u8') return this.#master(name, hint?.query ?? '', hint?.remote);
    if (PLAYLISTS.has(file)) return this.#playlist(name, file, hint?.query ?? '', hint?.remote);
    const e = this.#entries.get(name);
    if (!e) return undefined;
    e.used = this.#now();
    const f = e.packager.file(file);
    if (f) return fileNode(path, file, f);
    if (file !== e.packager.rendition.hint) return this.#dvrs.open(name, path, file);
    // the preload hint: answered once the part exists
    const p = e.packager;
    return e.packager.until(() => p.file(file) !== undefined || p.rendition.ended, this.#s.targetDuration * 3000)
      .then(() => { const got = p.file(file); return got ? fileNode(path, file, got) : undefined; });
  }

  async #playlist(name: string, file: string, query: string, remote: string | undefined): Promise<FsNode | undefined> {
    const q = new URLSearchParams(query);
    await this.#admit(name, q, remote);
    const e = await this.#entry(name, remote);
    if (!e) return undefined;
    e.used = this.#now();
    const r = e.packager.rendition;
    await e.packager.until(() => r.segments.length > 0 || r.ended, this.#s.startWaitMs);
    if (file === 'plain.m3u8') return { kind: 'file', path: `/${name}/${file}`, file: this.#rendered(e, 'plain', false, NO_CACHE, '') };
    const ask = { msn: q.get('_HLS_msn') ?? undefined, part: q.get('_HLS_part') ?? undefined, skip: q.get('_HLS_skip') ?? undefined };
    const d = decideReload(r, ask);
    if (d.kind === 'refuse') throw d.error;
    if (d.kind === 'wait' && !(await e.packager.until(() => isReady(r, d.msn, d.part), d.timeoutMs))) {
      throw llhlsErrors.reloadTimeout(d.msn, d.part);
    }
    // a blocking answer names a state that never changes: a CDN may keep it
    const cache = ask.msn === undefined ? NO_CACHE : ['cache-control', `public, max-age=${6 * r.targetDuration}`];
    return { kind: 'file', path: `/${name}/${file}`, file: this.#rendered(e, 'll', d.skip, cache, this.#reports(name)) };
  }

  /**
   * The multivariant playlist of `name`: its ladder's renditions (the `ladders` plugin), else the
   * stream itself. Asking for it is a demand of every rendition (an on-demand ladder starts): each
   * is packaged and waited for until its first segment, so its codecs and bit rates are known.
   */
  async #master(name: string, query: string, remote: string | undefined): Promise<FsNode | undefined> {
    const q = new URLSearchParams(query);
    await this.#admit(name, q, remote);
    const rungs = this.#d.ladders?.renditionsOf(name);
    const names = rungs ? rungs.map((r) => r.name) : [name];
    const entries = await Promise.all(names.map(async (n) => {
      const e = await this.#entry(n, remote);
      if (!e) return undefined;
      e.used = this.#now();
      const r = e.packager.rendition;
      await e.packager.until(() => r.segments.length > 0 || r.ended, this.#s.startWaitMs);
      return e;
    }));
    // the media playlists need the token as the multivariant one did
    const token = this.#s.token !== '' ? `?token=${encodeURIComponent(q.get('token') ?? '')}` : '';
    const variants: Variant[] = [];
    entries.forEach((e, i) => {
      const rung = rungs?.[i];
      const p = e?.packager;
      const v = p && variantOf(`${this.#relative(name, names[i]!)}index.m3u8${token}`, p.tracks(),
        bitrates(p.rendition, (uri) => p.file(uri)?.data.length), rung && { bitrate: rung.videoBitrate + rung.audioBitrate, frameRate: rung.frameRate });
      if (v) variants.push(v);
    });
    if (variants.length === 0) return undefined;
    const data = Buffer.from(renderMultivariant(variants));
    return { kind: 'file', path: `/${name}/master.m3u8`, file: playlistFile(data, `"mv-${digest(data)}"`, this.#now(), NO_CACHE) };
  }

  /** The folder of stream `to`'s files as a URI relative to stream `from`'s folder. */
  #relative(from: string, to: string): string {
    if (to === from) return '';
    const path = (p: string) => p.split('/').map(encodeURIComponent).join('/');
    return to.startsWith(`${from}/`) ? `${path(to.slice(from.length + 1))}/` : `${this.mount}/${path(to)}/`;
  }

  /**
   * The rendition reports of the ladder siblings of rendition `name` that are packaged (they are
   * kept packaged while one of them is watched, so a player switches without waiting).
   */
  #reports(name: string): string {
    const slash = name.lastIndexOf('/');
    const source = name.slice(0, slash);
    const rungs = slash > 0 ? this.#d.ladders?.renditionsOf(source) : undefined;
    if (!rungs?.some((r) => r.name === name)) return '';
    let out = '';
    for (const r of rungs) {
      const e = r.name === name ? undefined : this.#entries.get(r.name);
      if (!e) continue;
      e.used = this.#now();
      const line = reportOf(`../${this.#relative(source, r.name)}index.m3u8`, e.packager.rendition);
      if (line) out += `${line}\n`;
    }
    return out;
  }

  /** The DVR playlist (`dvr.ts`): a live stream with a recording is packaged (its archive the live edge). */
  async #dvr(name: string, query: string, remote: string | undefined): Promise<FsNode | undefined> {
    await this.#admit(name, new URLSearchParams(query), remote);
    const recorded = (this.#d.recordings?.ofStream(name).length ?? 0) > 0;
    const e = !recorded ? undefined : this.#d.streams.get(name) === undefined ? this.#entries.get(name) : await this.#entry(name, remote).catch(() => undefined);
    if (e) e.used = this.#now();
    if (e) await e.packager.until(() => e.packager.rendition.segments.length > 0 || e.packager.rendition.ended, this.#s.startWaitMs);
    return this.#dvrs.answer(this.#d.recordings, name, this.#s.dvrWindowMs, e);
  }

  /** A playlist request's token (`llhls.token`, or a user's key IAM allows), then its client's admission (`prePlay`). */
  async #admit(name: string, q: URLSearchParams, remote: string | undefined): Promise<void> {
    checkToken(this.#s.token, q.get('token') ?? '', name, this.#d.streams);
    if (remote !== undefined) await this.#d.viewers?.admit(name, remote, q);
  }

  /**
   * The playlist text of the packager's current version (rendered once per version, kind and
   * reports; a Cache-Control other than no-cache is the same file with that header).
   */
  #rendered(e: Entry, kind: 'll' | 'plain', skip: Skip, cache: readonly string[], reports: string): FsFile {
    const p = e.packager;
    if (e.renderedAt !== p.version) {
      e.rendered.clear();
      e.renderedAt = p.version;
    }
    const key = `${kind}.${skip || ''}.${reports}`;
    let f = e.rendered.get(key);
    if (!f) {
      const data = Buffer.from((kind === 'plain' ? renderPlain(p.rendition) : renderMedia(p.rendition, { skip })) + reports);
      const tag = reports === '' ? '' : `.${digest(Buffer.from(reports)).slice(0, 8)}`;
      f = playlistFile(data, `"${e.epoch}.${p.version}.${kind}${skip || ''}${tag}"`, this.#now(), NO_CACHE);
      e.rendered.set(key, f);
    }
    if (cache === NO_CACHE) return f;
    let held = e.rendered.get(`${key}\n${cache[1]}`);
    if (!held) e.rendered.set(`${key}\n${cache[1]}`, held = { ...f, headers: cache });
    return held;
  }

  /** `name`'s playlists of its packager's current version for the threads' views: the files main answers. */
  #texts(name: string): StreamTexts | undefined {
    const e = this.#entries.get(name);
    if (!e) return undefined;
    const reports = this.#reports(name);
    const ll = (skip: Skip) => this.#rendered(e, 'll', skip, NO_CACHE, reports);
    return { rendition: e.packager.rendition, files: { ll: ll(false), llYES: ll('YES'), llv2: ll('v2'), plain: this.#rendered(e, 'plain', false, NO_CACHE, '') } };
  }

  /**
   * A serving thread's view wants `stream`'s state, or one of its viewers used it (at most once a
   * second each): its packager and the viewer are kept as a request here would keep them.
   */
  fromView(message: unknown): void {
    const m = viewMessage(message);
    if (!m) return;
    this.changes.want(m.stream);
    if (m.t !== 'use') return;
    const e = this.#entries.get(m.stream);
    if (e) e.used = this.#now();
    // the ladder siblings are kept too, as a playlist answer here keeps them
    if (e) this.#reports(m.stream);
    this.#d.viewers?.touch(m.stream, m.ip, m.token);
  }

  /**
   * The packager of `name`, started when the stream is live and none runs (or the last one ended).
   * A stream nothing publishes is asked of the demand sources (an on-demand process starts for
   * `remote`, within its budget) and waited for up to `startWaitMs`.
   */
  async #entry(name: string, remote: string | undefined): Promise<Entry | undefined> {
    const e = this.#entries.get(name);
    if (e && !e.packager.rendition.ended) return e;
    const streams = this.#d.streams;
    // an ended stream's playlist (ENDLIST) stays, unless a demand source starts it again (on demand)
    if (streams.get(name) === undefined && !(await streams.whenPublished(name, this.#s.startWaitMs, remote ?? ''))) return e;
    const again = this.#entries.get(name);
    if (again && !again.packager.rendition.ended) return again;
    // the DVR archive of the ended packager stays for the new one to continue
    if (again) this.#stop(again, true);
    try {
      if (this.#entries.size >= this.#s.maxStreams) this.sweep();
      if (this.#entries.size >= this.#s.maxStreams) throw llhlsErrors.limit(this.#s.maxStreams);
      const e = this.#start(name);
      if (!e) this.#dvrs.stopped(name);
      return e;
    } catch (err) {
      this.#dvrs.stopped(name);
      throw err;
    }
  }

  #start(name: string): Entry | undefined {
    const s = this.#s;
    const epoch = randomBytes(8).toString('hex');
    const packager = new Packager({
      targetDuration: s.targetDuration, partTarget: s.partTarget, windowSegments: s.windowSegments,
      maxBytes: s.maxStreamBytes, epoch, now: this.#now, onFile: (file, f) => this.#changed(name, file, f),
    });
    const e: Entry = { name, epoch, packager, reader: undefined, used: this.#now(), rendered: new Map(), renderedAt: -1 };
    const id = `llhls-${++this.#seq}`;
    const peer = { id, protocol: 'llhls', stream: name, remote: '', params: {}, traffic: () => ({ rxBytes: 0, txBytes: 0 }) };
    const r = this.#d.streams.read(name, 'flv', peer, {
      send: (batch) => {
        try {
          packager.push(batch);
          return true;
        } catch (err) {
          this.#d.log.warn({ stream: name, err }, 'cannot package the stream');
          packager.end();
          return false;
        }
      },
      stop: () => packager.end(),
    }, { internal: true }); // the service's own reader: each viewer's requests are the door's
    if (!r.ok) return undefined;
    e.reader = r.handle;
    this.#entries.set(name, e);
    this.changes.started(name);
    return e;
  }

  /** `replaced`: a new packager of the stream follows at once (its DVR archive is kept for it). */
  #stop(e: Entry, replaced = false): void {
    if (this.#entries.get(e.name) === e) this.#entries.delete(e.name);
    e.reader?.leave();
    e.reader = undefined;
    e.packager.end();
    e.packager.clear();
    this.changes.stopped(e.name);
    if (replaced) this.#dvrs.replaced(e.name);
    else this.#dvrs.stopped(e.name);
  }

  /** A packager made or let go of a file: the threads' copies hear of it. */
  #changed(stream: string, name: string, f: PackagedFile | undefined): void {
    if (!this.changes.active) return;
    const path = `/${stream}/${name}`;
    this.changes.emit(path, f ? fileNode(path, name, f).file : undefined);
  }

  /** Every packaged file by path. */
  *#packaged(): Iterable<[string, FsFile]> {
    for (const e of this.#entries.values()) for (const [name, f] of e.packager.entries()) yield [`/${e.name}/${name}`, fileNode(`/${e.name}/${name}`, name, f).file];
  }

  /** Stops the packagers nobody asked for within `idleMs`. */
  sweep(): void {
    const before = this.#now() - this.#s.idleMs;
    for (const e of [...this.#entries.values()]) if (e.used < before) this.#stop(e);
    this.changes.sweep();
  }

  /** Stops every packager. */
  close(): void {
    for (const e of [...this.#entries.values()]) this.#stop(e);
  }

  async list(): Promise<FsFileInfo[]> {
    const out: FsFileInfo[] = [];
    for (const e of this.#entries.values()) for (const [name, f] of e.packager.entries()) out.push(info(`/${e.name}/${name}`, f));
    return out;
  }

  async stat(path: string): Promise<FsFileInfo | undefined> {
    const f = this.#file(path);
    return f && info(path, f);
  }

  async readFile(path: string): Promise<Buffer | undefined> {
    return this.#file(path)?.data;
  }

  /** A packaged file by its path (`/<stream>/<file>`), if it is held. */
  #file(path: string): PackagedFile | undefined {
    const slash = path.lastIndexOf('/');
    return this.#entries.get(path.slice(1, slash))?.packager.file(path.slice(slash + 1));
  }

  writeFile(): Promise<FsWriteResult> {
    return Promise.reject(llhlsErrors.readOnly());
  }

  deleteFile(): Promise<boolean> {
    return Promise.reject(llhlsErrors.readOnly());
  }

  usage(): { used: number; limit: number; files?: number } {
    let used = 0;
    for (const e of this.#entries.values()) used += e.packager.bytes;
    return { used, limit: 0 };
  }
}
