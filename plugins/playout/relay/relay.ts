// The relay of one `playout:` input: reads the source through a remuxing ffmpeg, and serves ONE
// continuous MPEG-TS stream to the supervised process on a loopback port. When the source stalls or
// ends it loops the error-frame clip (encoded once to match the source) until the source delivers a
// keyframe again. See README.md for the diagram.
import type { Logger } from 'pino';
import type { PlaylistPlayState, PlayoutStatus } from '../api.ts';
import { imageProblem } from './clip.ts';
import { Consumers } from './consumers.ts';
import { RelayError } from './errors.ts';
import { ErrorFrame } from './error-frame.ts';
import { decodeKeyframe } from './keyframe.ts';
import { SourceStats } from './source-stats.ts';
import { SourceRun } from './source.ts';
import { Prefetch } from './prefetch.ts';
import { Splicer } from './splicer.ts';
import { describeParams, paramsMismatch, type StreamParams } from './stream-params.ts';
import { SwapState, type SwitchResult } from './swap.ts';
import type { Ffmpeg } from './ffmpeg.ts';

export interface RelayOptions {
  /** The input address as configured (`playout:rtmp://...`), for status.id. */
  id: string;
  /** Source URL to read (placeholders already resolved). */
  url: string;
  /** The user's input options: how to read the source. */
  inputOptions: readonly string[];
  /** Loopback TCP port to listen on (127.0.0.1). */
  port: number;
  /** Encoder binary path. */
  ffmpeg: Ffmpeg;
  /** Text for the generated slate (the process id). */
  label: string;
  log: Logger;
  /** Image set through the API (jpg/png), kept by the shell across restarts. */
  errorframe?: Buffer;
  /** A `playlist:` input: the source runs are its items, one after the other (`url` is a label then). */
  playlist?: RelayPlaylist;
}

/** The item sequence of a playlist input (../playlist/feed.ts), as the relay uses it. */
export interface RelayPlaylist {
  /** The next item's run (undefined: nothing to play now); after `prefetch`, the item it picked. */
  next(): PlaylistRun | undefined;
  /** Picks the item after the current one ahead of time (the same object `next` then returns). */
  prefetch(): PlaylistRun | undefined;
  /** The current item delivered its first keyframe. */
  started(): void;
  /** The current item ended; true when every item failed in a row (retries slow down). */
  ended(delivered: boolean, reason: string): boolean;
  status(): PlaylistPlayState;
}

/** One item's run: its label, ffmpeg's arguments, and the seconds it plays when known. */
export interface PlaylistRun { url: string; args: string[]; duration?: number }

/** No byte from a delivering source for this long: it is lost. */
const STALL_MS = 1000;
/** A source run that never delivered is restarted after this long. */
const OPEN_TIMEOUT_MS = 10_000;
/** How long to wait for the first source before sending the default clip. */
const FIRST_SOURCE_MS = 2000;
const TICK_MS = 40;
const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 2000;
/** A playlist's next item may take this long to deliver before the error frame covers the join. */
const JOIN_GRACE_MS = 1000;

export class Relay {
  #o: RelayOptions;
  #url: string;
  #consumers: Consumers;
  #splicer: Splicer;
  #stats = new SourceStats();
  #swap: SwapState;
  #current: SourceRun | undefined;
  /** The playlist item `#current` plays, and the next one started ahead of the join. */
  #item: PlaylistRun | undefined;
  #prefetch = new Prefetch();
  /** The channel clock: the wall time of output media time 0; the media time the current item began at. */
  #clock0 = 0;
  #itemAt = 0;
  #mode: 'none' | 'source' | 'loop' = 'none';
  #params: StreamParams | undefined;
  #frame: ErrorFrame;
  #defaultClip = false;
  #timer: NodeJS.Timeout | undefined;
  #startedAt = 0;
  #lastOutWall = 0;
  #restartAt = 0;
  #backoff = BACKOFF_MIN_MS;
  #stopped = false;
  #streams = 0;
  /** The last failure of a source that never delivered, logged once until a run delivers again. */
  #lastFailure = '';
  /** Wall clock of the end of the last playlist item (0: not between items). */
  #joinSince = 0;

  constructor(opts: RelayOptions) {
    this.#o = opts;
    this.#url = opts.url;
    this.#frame = new ErrorFrame(opts.ffmpeg, opts.label, opts.log, opts.errorframe);
    this.#consumers = new Consumers(opts.port, opts.log, () => this.#splicer.tables());
    this.#splicer = new Splicer((p, key) => this.#consumers.packet(p, key));
    this.#swap = new SwapState(opts.url);
  }

  /** Resolves once listening; the source is read from then on. */
  async start(): Promise<void> {
    await this.#consumers.listen();
    this.#startedAt = Date.now();
    this.#advance();
    this.#timer = setInterval(() => this.#guard(undefined, () => this.#tick()), TICK_MS);
  }

  /**
   * The fault boundary of this input: every callback of a source run and the timer run through
   * here. Whatever one throws is logged (the source, the reason) and ends that run, which restarts
   * by itself with the error frame meanwhile; the process, the other relays and the consumers go on.
   */
  #guard(run: SourceRun | undefined, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#o.log.warn({ source: sourceName(this.#url) }, `playout input failed: ${(err as Error)?.message ?? String(err)}`);
      try {
        const failed = run ?? this.#current;
        if (failed === this.#current) this.#mode = 'none';
        void failed?.kill();
      } catch { /* the run is gone or going */ }
    }
  }

  /**
   * The next source run becomes current: the source again, or the playlist's next item (none now:
   * undefined). An item started ahead takes over with what it delivered meanwhile.
   */
  #advance(): void {
    const pl = this.#o.playlist;
    if (!pl) {
      this.#current = this.#run(this.#url);
      return;
    }
    const item = pl.next();
    this.#item = item;
    const ahead = this.#prefetch.take(item ?? {});
    if (!item) {
      this.#current = undefined;
      this.#restartAt = Date.now() + BACKOFF_MAX_MS; // an empty or ended playlist: looked at again later
      return;
    }
    this.#url = item.url;
    this.#current = ahead?.run ?? this.#run(item.url, item.args);
    if (!ahead) return;
    if (ahead.params) this.#onParams(ahead.run, ahead.params);
    for (const packets of ahead.held) this.#onPackets(ahead.run, packets, 0);
    if (ahead.exited) this.#onExit(ahead.run);
  }

  /** Starts the next playlist item when the current one is due to end within the lead. */
  #startAhead(now: number): void {
    const pl = this.#o.playlist;
    const run = this.#current;
    const secs = this.#item?.duration;
    const endAt = secs === undefined ? undefined : this.#clock0 + (this.#itemAt + secs) * 1000;
    if (!pl || !run || this.#mode !== 'source' || !this.#prefetch.due(run, endAt, now)) return;
    const next = pl.prefetch();
    if (next) this.#prefetch.start(run, next, this.#run(next.url, next.args));
  }

  #run(url: string, args?: string[]): SourceRun {
    return new SourceRun({
      ffmpeg: this.#o.ffmpeg, url, inputOptions: this.#o.inputOptions, args, log: this.#o.log,
      onParams: (run, p) => this.#guard(run, () => this.#onParams(run, p)),
      onPackets: (run, packets) => this.#guard(run, () => this.#onPackets(run, packets, 0)),
      onExit: (run) => this.#guard(undefined, () => this.#onExit(run)),
    });
  }

  #onParams(run: SourceRun, p: StreamParams): void {
    if (this.#prefetch.hold(run, undefined, p)) return;
    if (this.#swap.run === run) {
      this.#swap.probed(this.#params ? paramsMismatch(this.#params, p) : null);
      return;
    }
    if (run !== this.#current) return;
    if (this.#params && paramsMismatch(this.#params, p) === null && this.#frame.ready) return;
    this.#params = p;
    this.#o.log.info({ url: run.url, params: describeParams(p) }, 'playout source parameters');
    void this.#frame.encode(p).catch(() => undefined); // logged by ErrorFrame
  }

  #onPackets(run: SourceRun, packets: Buffer[], from: number): void {
    if (this.#prefetch.hold(run, packets)) return;
    if (this.#swap.run === run) {
      const at = this.#swap.observe(packets);
      if (at < 0) return;
      this.#switchTo(run);
      from = at;
    }
    if (run !== this.#current || this.#stopped) return;
    const input = run.input;
    for (let i = from; i < packets.length; i++) {
      const p = packets[i]!;
      if (input.observeTables(p)) {
        if (this.#mode === 'source') this.#splicer.feed(p);
        continue;
      }
      this.#stats.observe(input, p);
      if (this.#mode !== 'source' && input.ready && input.isKeyframe(p)) this.#resume(run);
      if (this.#mode === 'source') this.#splicer.feed(p);
    }
    if (this.#mode === 'source') this.#lastOutWall = Date.now();
    this.#consumers.flush();
  }

  /** The source delivers a keyframe: the output goes back to it. */
  #resume(run: SourceRun): void {
    if (this.#mode === 'loop') this.#o.log.info({ url: run.url }, 'playout source back');
    this.#lastFailure = '';
    this.#mode = 'source';
    this.#joinSince = 0;
    this.#o.playlist?.started();
    this.#tickClock();
    this.#streams++;
    this.#backoff = BACKOFF_MIN_MS;
    this.#splicer.begin(run.input);
  }

  /** At an item's start: where it begins on the channel clock (set anew after a jump of over 5 s: an outage). */
  #tickClock(): void {
    const now = Date.now();
    this.#itemAt = this.#splicer.time();
    if (this.#clock0 === 0 || Math.abs(now - (this.#clock0 + this.#itemAt * 1000)) > 5000) this.#clock0 = now - this.#itemAt * 1000;
  }

  /** A matching switch target delivered its keyframe: it becomes the source. */
  #switchTo(run: SourceRun): void {
    const old = this.#current;
    this.#current = run;
    this.#url = run.url;
    this.#mode = 'none'; // #onPackets resumes on this run's keyframe, next in line
    this.#swap.done();
    void old?.kill();
  }

  #onExit(run: SourceRun): void {
    if (this.#prefetch.ended(run)) return;
    if (this.#swap.run === run) this.#swap.ended(run.lastLines.at(-1) ?? 'source ended');
    if (run !== this.#current) return;
    this.#current = undefined;
    if (this.#stopped) return;
    const last = run.lastLines.at(-1) ?? 'no output';
    if (this.#o.playlist) return this.#itemEnded(run, last);
    if (this.#mode === 'source') this.#lost(`source ended: ${last}`);
    else if (run.lastDataAt === 0 && last !== this.#lastFailure) {
      // a source that cannot be read (refused, garbage, gone): once per reason, not per retry
      this.#lastFailure = last;
      this.#o.log.warn({ source: sourceName(run.url) }, `playout source failed: ${last}`);
    }
    this.#backoff = run.lastDataAt > 0 ? BACKOFF_MIN_MS : Math.min(this.#backoff * 2, BACKOFF_MAX_MS);
    this.#restartAt = Date.now() + this.#backoff;
  }

  /** A playlist item ended: the next one starts now, spliced in at its first keyframe. */
  #itemEnded(run: SourceRun, last: string): void {
    const allFailed = this.#o.playlist!.ended(run.lastDataAt > 0, last);
    if (this.#mode === 'source') {
      this.#mode = 'none';
      this.#joinSince = Date.now();
    }
    this.#backoff = allFailed ? Math.min(this.#backoff * 2, BACKOFF_MAX_MS) : BACKOFF_MIN_MS;
    this.#restartAt = allFailed ? Date.now() + this.#backoff : 0;
    if (!allFailed) this.#advance();
  }

  /** The source is gone: loop the clip (as soon as there is one). */
  #lost(why: string): void {
    this.#o.log.info({ url: this.#url, why }, 'playout source lost, sending the error frame');
    this.#mode = 'none';
    this.#startLoop();
  }

  #startLoop(): void {
    if (this.#frame.start(this.#lastOutWall || Date.now())) this.#mode = 'loop';
  }

  #tick(): void {
    const now = Date.now();
    const run = this.#current;
    if (run && this.#mode === 'source' && now - run.lastDataAt > STALL_MS) {
      this.#lost('source stalled');
      void run.kill();
    } else if (run && run.lastDataAt === 0 && now - run.startedAt > OPEN_TIMEOUT_MS) {
      void run.kill();
    }
    const joining = this.#joinSince > 0 && now - this.#joinSince < JOIN_GRACE_MS;
    if (this.#mode === 'none' && !joining && (this.#streams > 0 || now - this.#startedAt > FIRST_SOURCE_MS)) {
      if (this.#frame.ready) this.#startLoop();
      else if (!this.#defaultClip && !this.#params) {
        this.#defaultClip = true; // no source yet: the default slate, without taking its parameters as the source's
        void this.#frame.encode(this.#params).catch(() => undefined);
      }
    }
    if (!this.#current && !this.#stopped && now >= this.#restartAt) this.#advance();
    else this.#startAhead(now);
    this.#swap.tick(now);
    if (this.#mode === 'loop') {
      this.#frame.pump(now, this.#splicer);
      this.#consumers.flush();
    }
  }

  /** Idempotent: listener, sockets, every child and timer gone. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    const run = this.#current;
    this.#current = undefined;
    await Promise.all([run?.kill(), this.#prefetch.cancel(), this.#swap.cancel('relay stopped'), this.#consumers.close(), this.#frame.close()]);
  }

  /** Closes the current source; it reopens by itself. */
  reopen(): void {
    this.#backoff = BACKOFF_MIN_MS;
    void this.#current?.kill();
  }

  switchStream(url: string): Promise<SwitchResult> {
    if (this.#stopped) return Promise.resolve({ ok: false, reason: 'relay stopped' });
    return this.#swap.begin(url, this.#url, () => this.#run(url));
  }

  /** Sets the error-frame image (throws RelayError `bad_image` if it is too large or ffmpeg can't decode it) and re-encodes. */
  async setErrorframe(image: Buffer): Promise<void> {
    const problem = await imageProblem(this.#o.ffmpeg, image);
    if (problem) throw new RelayError('bad_image', problem);
    this.#frame.image = image;
    await this.encodeErrorframe();
  }

  async encodeErrorframe(): Promise<void> {
    try {
      await this.#frame.encode(this.#params);
    } catch (err) {
      throw new RelayError('encode_failed', (err as Error).message);
    }
  }

  async keyframe(kind: 'jpg' | 'png'): Promise<Buffer | undefined> {
    const ts = this.#stats.keyframe.get();
    return ts ? decodeKeyframe(this.#o.ffmpeg, ts, kind) : undefined;
  }

  status(): PlayoutStatus {
    const run = this.#current;
    const reading = this.#mode === 'source' && run !== undefined && Date.now() - run.lastDataAt < STALL_MS;
    const s = this.#stats;
    return {
      id: this.#o.id, url: this.#url, stream: this.#streams,
      queue: this.#consumers.queue(), aqueue: 0, dup: this.#frame.dup, drop: this.#consumers.drop, enc: this.#frame.enc,
      looping: this.#mode === 'loop', duplicating: false, gop: s.gop,
      debug: { mode: this.#mode, port: this.#o.port, consumers: this.#consumers.count, source_pid: run?.pid ?? null, params: this.#params ? describeParams(this.#params) : '', clip: this.#frame.clipFor },
      input: { state: reading ? 'running' : 'idle', packet: s.packets, time: Math.floor(s.time), size_kb: Math.floor(s.bytes / 1024) },
      output: {
        state: this.#mode !== 'none' && this.#consumers.count > 0 ? 'running' : 'idle',
        packet: this.#splicer.packets, time: Math.floor(this.#splicer.time()), size_kb: Math.floor(this.#splicer.bytes / 1024),
      },
      swap: this.#swap.status(),
    };
  }

  /** Where a playlist input is (undefined for a plain `playout:` input). */
  playlist(): PlaylistPlayState | undefined {
    return this.#o.playlist?.status();
  }

  /** Child pids (source runs), for tests and the benchmark. */
  pids(): number[] {
    return [this.#current?.pid, this.#swap.run?.pid, this.#prefetch.run?.pid].filter((p): p is number => p !== undefined);
  }
}

/** A source URL for the log: no user info, no query (tokens live there). */
export function sourceName(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return url.replace(/[?#].*$/, '').replace(/\/\/[^/@]*@/, '//');
  }
}
