/*
 * The `llhls` store's change feed (`FilesystemService.changes`), main's side of what the serving
 * threads hold: every packaged file (inits, parts, segments: the threads answer those), the
 * admitted viewers, and for each stream a thread's view asked for recently (`want`, refreshed by
 * its viewers' use) the stream's state after every packager version (`view-state.ts`). A service
 * whose threads never asked for a stream renders nothing for them.
 */
import type { FsChange, FsChangeFeed, FsFile } from '../../sdk/index.ts';
import type { Rendition } from './playlist.ts';
import { encodeState, statePath, TEXT_KINDS, viewerPath, type TextKind } from './view-state.ts';
import { FULL_SWEEP_GAP_MS } from './viewers.ts';

/** A stream's playlists of its packager's current version, as main answers them. */
export interface StreamTexts {
  rendition: Rendition;
  files: Record<TextKind, FsFile>;
}

export interface FeedSource {
  /** Every packaged file of every stream, by path. */
  files(): Iterable<[string, FsFile]>;
  /** The packager of `stream`'s changes (after each version), if it is packaged. */
  onVersion(stream: string, fn: () => void): (() => void) | undefined;
  /** `stream`'s playlists now, if it is packaged. */
  texts(stream: string): StreamTexts | undefined;
  now(): number;
  /** A stream's state is fed this long after the last want. */
  keepMs: number;
}

interface Want {
  until: number;
  /** Stops following its packager's versions. */
  off: (() => void) | undefined;
}

/** Streams whose state is wanted at most (a want beyond is dropped until some expire). */
const MAX_WANTS = 4096;

/** A viewer's entry: nothing but its presence (one shared empty body, in shared memory: never copied). */
const PRESENT: FsFile = Object.freeze({ data: Buffer.from(new SharedArrayBuffer(0)), size: 0, mtimeMs: 0, etag: '""' });

export class LlhlsFeed implements FsChangeFeed {
  #src: FeedSource;
  #seq = 0;
  #subscribers = new Set<(c: FsChange) => void>();
  /** The views' files (states, viewers) now, for a new thread's snapshot. */
  #fed = new Map<string, FsFile>();
  #wants = new Map<string, Want>();
  /** When a sweep last ran (at the bound, a new name sweeps at most every `FULL_SWEEP_GAP_MS`). */
  #sweptAt = -Infinity;

  constructor(src: FeedSource) {
    this.#src = src;
  }

  snapshot(): { seq: number; files: Array<[string, FsFile]> } {
    return { seq: this.#seq, files: [...this.#src.files(), ...this.#fed] };
  }

  subscribe(fn: (c: FsChange) => void): () => void {
    this.#subscribers.add(fn);
    return () => { this.#subscribers.delete(fn); };
  }

  /** Threads copy the store (nothing is made for the feed without them). */
  get active(): boolean {
    return this.#subscribers.size > 0;
  }

  /** A file of `path` was made (or let go: undefined); the threads' copies hear of it. */
  emit(path: string, file: FsFile | undefined): void {
    const change: FsChange = { seq: ++this.#seq, path, file };
    for (const fn of this.#subscribers) fn(change);
  }

  /** A viewer was admitted and is kept (`kept`), or let go. */
  viewer(stream: string, ip: string, token: string, kept: boolean): void {
    this.#set(viewerPath(stream, ip, token), kept ? PRESENT : undefined);
  }

  /** A thread's view asked for `stream`: its state is fed from now on (at once when it is packaged) until `keepMs` pass without another ask. */
  want(stream: string): void {
    const w = this.#wants.get(stream);
    const until = this.#src.now() + this.#src.keepMs;
    if (w) {
      w.until = until;
      if (!w.off) this.#follow(stream, w);
      return;
    }
    // names come from requests: a flood of them is bounded (an unknown stream's want is dropped beyond)
    if (this.#wants.size >= MAX_WANTS && this.#src.now() - this.#sweptAt >= FULL_SWEEP_GAP_MS) this.sweep();
    if (this.#wants.size >= MAX_WANTS) return;
    const fresh: Want = { until, off: undefined };
    this.#wants.set(stream, fresh);
    this.#follow(stream, fresh);
  }

  /** `stream`'s packager started: a wanted stream's state is fed from it. */
  started(stream: string): void {
    const w = this.#wants.get(stream);
    if (w && !w.off) this.#follow(stream, w);
  }

  /** `stream`'s packager stopped: its state goes (the views pass its playlists to main again). */
  stopped(stream: string): void {
    const w = this.#wants.get(stream);
    w?.off?.();
    if (w) w.off = undefined;
    this.#set(statePath(stream), undefined);
  }

  /** Stops feeding the states nobody wanted within `keepMs`. */
  sweep(): void {
    const now = this.#src.now();
    this.#sweptAt = now;
    for (const [stream, w] of this.#wants) {
      if (w.until >= now) continue;
      this.stopped(stream);
      this.#wants.delete(stream);
    }
  }

  #follow(stream: string, w: Want): void {
    w.off = this.#src.onVersion(stream, () => this.#publish(stream));
    if (w.off) this.#publish(stream);
  }

  #publish(stream: string): void {
    const t = this.#src.texts(stream);
    if (!t) return;
    const r = t.rendition;
    const texts = Object.fromEntries(TEXT_KINDS.map((k) => {
      const f = t.files[k];
      return [k, { etag: f.etag, mtimeMs: f.mtimeMs, data: f.data! }];
    })) as Parameters<typeof encodeState>[0]['texts'];
    const data = encodeState({
      ended: r.ended, partTarget: r.partTarget, targetDuration: r.targetDuration, lastMsn: r.lastMsn, openMsn: r.openMsn,
      openParts: r.openParts, newestPart: r.newestPart, segments: r.segments.length, hint: r.hint, texts,
    });
    this.#set(statePath(stream), { data, size: data.length, mtimeMs: this.#src.now(), etag: '""' });
  }

  #set(path: string, file: FsFile | undefined): void {
    if (file) this.#fed.set(path, file);
    else if (!this.#fed.delete(path)) return;
    this.emit(path, file);
  }
}
