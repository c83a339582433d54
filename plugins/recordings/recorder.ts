import type { Logger } from 'pino';
import type { EventsService, FilesystemService, StateDocument, StreamReader, StreamTable } from '../../sdk/index.ts';
import { Segmenter, type CutSegment } from './segmenter.ts';
import { SegmentIndex, type Segment } from './segments.ts';
import type { RecordingConfig } from './schema.ts';

/** Segments waiting to be stored at once; a segment cut while this many wait is dropped (and reported). */
export const MAX_PENDING = 4;

/** The stored index of one recording. */
export interface IndexData { segments: Segment[] }

export interface RecorderDeps {
  streams: StreamTable;
  /** The recording's filesystem now (filesystems may come later). */
  fs(name: string): FilesystemService | undefined;
  log: Logger;
  events?: EventsService;
  maxSegmentBytes: number;
  maxEntries: number;
  now(): number;
}

/** `<prefix>/<name>/<YYYY-MM-DD>/<unix-ms>.ts` (UTC date). */
export function segmentPath(cfg: RecordingConfig, start: number): string {
  const day = new Date(start).toISOString().slice(0, 10);
  return `${cfg.prefix === '/' ? '' : cfg.prefix}/${cfg.name}/${day}/${start}.ts`;
}

/**
 * One recording: reads its stream from the table while it is published, cuts segments, stores
 * them in its filesystem one after another and indexes each once it is stored (so the index never
 * names a file that is not whole), and drops what retention says.
 */
export class Recorder {
  cfg: RecordingConfig;
  readonly index: SegmentIndex;
  readonly #doc: StateDocument<IndexData>;
  readonly #d: RecorderDeps;
  #reader: StreamReader | undefined;
  #segmenter: Segmenter | undefined;
  #chain: Promise<void> = Promise.resolve();
  #pending = 0;
  #closed = false;

  constructor(cfg: RecordingConfig, doc: StateDocument<IndexData>, deps: RecorderDeps) {
    this.cfg = cfg;
    this.#doc = doc;
    this.#d = deps;
    this.index = new SegmentIndex(doc.data.segments);
  }

  get recording(): boolean {
    return this.#reader !== undefined;
  }

  /** Segments cut and not stored yet. */
  get storing(): number {
    return this.#pending;
  }

  #subject(): Record<string, string> {
    return { recording: this.cfg.name, stream: this.cfg.stream };
  }

  /** Starts reading when the stream is live and not read yet. */
  attach(): void {
    if (this.#reader || this.#closed || !this.#d.streams.get(this.cfg.stream)) return;
    const seg = new Segmenter({
      segmentMs: this.cfg.segment_seconds * 1000, maxBytes: this.#d.maxSegmentBytes, now: this.#d.now,
      onSegment: (s) => this.#store(s),
      onSkip: (reason) => this.#failed(reason),
    });
    const peer = {
      id: `recording-${this.cfg.name}`, protocol: 'recording', stream: this.cfg.stream, remote: '', params: {},
      traffic: () => ({ rxBytes: 0, txBytes: 0 }),
    };
    const r = this.#d.streams.read(this.cfg.stream, 'mpegts', peer, {
      send: (batch) => { for (const b of batch) seg.push(b); return true; },
      stop: (reason) => { if (this.#segmenter === seg) this.#detached(reason); },
    }, { internal: true }); // the service's own reader: no client to admit or count
    if (!r.ok) {
      this.#d.log.warn({ recording: this.cfg.name, reason: r.reason }, 'cannot read the stream');
      return;
    }
    this.#segmenter = seg;
    this.#reader = r.handle;
    this.#d.events?.emit('recording.started', this.#subject(), { filesystem: this.cfg.filesystem });
  }

  #detached(reason: string): void {
    this.#segmenter?.end();
    this.#segmenter = undefined;
    this.#reader = undefined;
    this.#d.events?.emit('recording.stopped', this.#subject(), { reason });
  }

  /** Stops reading (the open segment is stored). */
  detach(reason = 'stopped'): void {
    const r = this.#reader;
    if (!r) return;
    r.leave();
    this.#detached(reason);
  }

  /** Stops reading and waits for every write; nothing starts again. */
  async close(): Promise<void> {
    this.detach('shutdown');
    this.#closed = true;
    await this.#chain;
    await this.#doc.save();
  }

  #failed(reason: string, file?: string): void {
    this.#d.log.warn({ recording: this.cfg.name, file, reason }, 'segment not stored');
    this.#d.events?.emit('recording.segment.failed', this.#subject(), { reason, ...(file ? { file } : {}) });
  }

  #store(s: CutSegment): void {
    const file = segmentPath(this.cfg, s.start);
    if (this.#pending >= MAX_PENDING) return this.#failed(`${MAX_PENDING} segments are waiting to be stored`, file);
    this.#pending++;
    this.#chain = this.#chain.then(() => this.#write(s, file)).finally(() => { this.#pending--; });
  }

  async #write(s: CutSegment, file: string): Promise<void> {
    const fs = this.#d.fs(this.cfg.filesystem);
    try {
      if (!fs) throw new Error(`no filesystem '${this.cfg.filesystem}'`);
      if (fs.writeStream) await fs.writeStream(file, s.chunks, { length: s.bytes });
      else await fs.writeFile(file, Buffer.concat(s.chunks, s.bytes));
    } catch (err) {
      return this.#failed((err as Error).message, file);
    }
    this.index.add({ start: s.start, duration: s.duration, bytes: s.bytes, file });
    await this.retain(this.#d.now(), false);
  }

  /**
   * The filesystem reported `file` lost after it answered the write (an S3 filesystem's buffered
   * write refused for good or dropped: `fs.lost`): it leaves the index, so spans show the hole and
   * cuts never read it. False when the index does not name it.
   */
  async lost(file: string, reason: string): Promise<boolean> {
    const seg = this.index.list.find((s) => s.file === file);
    if (!seg) return false;
    this.index.remove([seg]);
    this.#failed(`lost by the filesystem: ${reason}`, file);
    await this.#doc.save().catch((err: unknown) => this.#d.log.error({ recording: this.cfg.name, err }, 'cannot save the index'));
    return true;
  }

  /** Deletes what retention drops (by size and count after a segment; by age too on the timer), then saves the index. */
  async retain(now: number, byAge = true): Promise<number> {
    const r = this.cfg.retention;
    const drop = this.index.expired(now, byAge ? r.max_age_seconds * 1000 : 0, r.max_bytes, this.#d.maxEntries);
    const fs = this.#d.fs(this.cfg.filesystem);
    const gone: Segment[] = [];
    for (const s of drop) {
      try {
        if (fs) await fs.deleteFile(s.file);
        gone.push(s);
      } catch (err) {
        this.#d.log.warn({ recording: this.cfg.name, file: s.file, err }, 'cannot delete a segment; retried later');
        break;
      }
    }
    this.index.remove(gone);
    await this.#doc.save().catch((err: unknown) => this.#d.log.error({ recording: this.cfg.name, err }, 'cannot save the index'));
    return gone.length;
  }

  /** Deletes every segment (a recording deleted without `keep_files`). */
  async purge(): Promise<void> {
    await this.#chain;
    const fs = this.#d.fs(this.cfg.filesystem);
    const all = [...this.index.list];
    for (const s of all) await fs?.deleteFile(s.file).catch(() => false);
    this.index.remove(all);
    await this.#doc.save();
  }

  /** Runs `fn` after the writes queued so far (retention and purges do not race a write). */
  after<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.#chain.then(fn);
    this.#chain = p.then(() => undefined, () => undefined);
    return p;
  }
}
