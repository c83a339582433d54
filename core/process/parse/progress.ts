// Turns the stderr of a stock ffmpeg (default log level, stats on) into the Progress the API shows
// (reference 7.7), and tells the supervisor when work was last seen so it can run a stale watchdog.
//
// Lines are classified as they come: stats lines (`frame=...`, and `size=...` for audio-only runs) are
// progress; everything else is log, and until the prelude is complete it is also parsed for the stream
// descriptions. A stats line is only trusted once the prelude announced as many output streams as the
// stream mapping promised: ffmpeg writes an output's header (and so its `Output #` block) only when all
// its streams have started, and stats may come before that.
import { messageStart } from './lines.ts';
import { PreludeParser, type PreludeStream } from './prelude.ts';
import { SlidingRate } from './rate.ts';
import type { Progress, ProgressIO } from './schemas.ts';
import { createStatsLine, isStatsLine, parseStatsLine } from './stats-line.ts';

export { LineSplitter, splitLines } from './lines.ts';

/** Where non-progress lines go; `prelude` is true while they belong to the prelude (see log.ts). */
export interface LogSink {
  add(line: string, prelude: boolean): void;
}

export interface ProgressParserOptions {
  /** Clock in milliseconds; injected so tests are deterministic. */
  now?: () => number;
  /** Config ids of the inputs/outputs, by ffmpeg file index. */
  inputIds?: readonly string[];
  outputIds?: readonly string[];
  /** Length of the window for fps and bitrate, in seconds (reference: 30). */
  windowSeconds?: number;
  /**
   * Stats lines to wait for a prelude that stays incomplete (an `Output #` block that never matches
   * the mapping) before trusting it as it is. The original waits forever, and its watchdog then kills
   * a healthy process. 0 waits forever.
   */
  preludeGraceLines?: number;
  log?: LogSink;
}

/** `log`: a log line; `progress`: an accepted stats line; `ignored`: empty, or stats before the prelude. */
export type LineKind = 'log' | 'progress' | 'ignored';

export function emptyProgress(): Progress {
  return {
    inputs: [], outputs: [], frame: 0, packet: 0, fps: 0, q: 0, size_kb: 0, time: 0, bitrate_kbit: 0,
    speed: 0, drop: 0, dup: 0,
  };
}

function toProgressIO(s: PreludeStream, id: string): ProgressIO {
  const io: ProgressIO = {
    id, address: s.address, index: s.index, stream: s.stream, format: s.format, type: s.type,
    codec: s.codec, coder: s.coder, frame: 0, keyframe: 0, framerate: { min: 0, max: 0, avg: 0 }, fps: 0,
    packet: 0, pps: 0, size_kb: 0, bitrate_kbit: 0, extradata_size_bytes: 0, q: 0, avstream: null,
  };
  // Omitted when empty, as the reference's JSON does.
  if (s.pixFmt) io.pix_fmt = s.pixFmt;
  if (s.width) io.width = s.width;
  if (s.height) io.height = s.height;
  if (s.samplingHz) io.sampling_hz = s.samplingHz;
  if (s.layout) io.layout = s.layout;
  if (s.channels) io.channels = s.channels;
  return io;
}

export class ProgressParser {
  readonly #now: () => number;
  readonly #grace: number;
  readonly #log: LogSink | undefined;
  readonly #stats = createStatsLine();
  readonly #fps: SlidingRate;
  readonly #bitrate: SlidingRate;
  #inputIds: readonly string[];
  #outputIds: readonly string[];
  #prelude = new PreludeParser();
  #preludeDone = false;
  #earlyStats = 0;
  #progress = emptyProgress();
  #sizeBytes = 0;
  #startedAt: number;
  #lastProgressAt: number | undefined;

  constructor(options: ProgressParserOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#grace = options.preludeGraceLines ?? 20;
    this.#log = options.log;
    this.#inputIds = options.inputIds ?? [];
    this.#outputIds = options.outputIds ?? [];
    this.#fps = new SlidingRate(options.windowSeconds ?? 30);
    this.#bitrate = new SlidingRate(options.windowSeconds ?? 30);
    this.#startedAt = this.#now();
  }

  /** Classifies and consumes one stderr line (without its line end). */
  feed(line: string): LineKind {
    if (!line.length) return 'ignored';
    const start = messageStart(line);
    if (!isStatsLine(line, start)) {
      if (!this.#preludeDone) this.#prelude.feed(line);
      this.#log?.add(line, !this.#preludeDone);
      return 'log';
    }
    if (!this.#preludeDone && !this.#completePrelude()) return 'ignored';
    parseStatsLine(line, this.#stats, start);
    this.#apply();
    return 'progress';
  }

  /** The live progress of this run, updated in place; copy it (snapshot) to keep it. */
  get progress(): Readonly<Progress> {
    return this.#progress;
  }

  snapshot(): Progress {
    return structuredClone(this.#progress);
  }

  get preludeDone(): boolean {
    return this.#preludeDone;
  }

  /** When (ms) the run started, i.e. when the parser was created or last reset. */
  get startedAt(): number {
    return this.#startedAt;
  }

  /** When (ms) a stats line last showed new frames, bytes or time; undefined before the first one. */
  get lastProgressAt(): number | undefined {
    return this.#lastProgressAt;
  }

  /** Milliseconds without progress (since the start if there was none), for a stale watchdog. */
  idleFor(nowMs = this.#now()): number {
    return nowMs - (this.#lastProgressAt ?? this.#startedAt);
  }

  /** Changes the config ids (after an update of the process), also on the streams already known. */
  setIds(inputIds: readonly string[], outputIds: readonly string[]): void {
    this.#inputIds = inputIds;
    this.#outputIds = outputIds;
    for (const io of this.#progress.inputs) io.id = inputIds[io.index] ?? '';
    for (const io of this.#progress.outputs) io.id = outputIds[io.index] ?? '';
  }

  /** Forgets everything about the run (reference: progress is reset when the process exits). */
  reset(): void {
    this.#prelude = new PreludeParser();
    this.#preludeDone = false;
    this.#earlyStats = 0;
    this.#progress = emptyProgress();
    this.#sizeBytes = 0;
    this.#fps.reset();
    this.#bitrate.reset();
    this.#startedAt = this.#now();
    this.#lastProgressAt = undefined;
  }

  #completePrelude(): boolean {
    const p = this.#prelude;
    // Without a mapping block the log level hides the prelude entirely: there is nothing to wait for.
    const complete = !p.sawMapping || p.outputCount === p.mappedOutputs;
    if (!complete && (this.#grace <= 0 || ++this.#earlyStats <= this.#grace)) return false;
    this.#preludeDone = true;
    this.#progress.inputs = p.inputs().map((s) => toProgressIO(s, this.#inputIds[s.index] ?? ''));
    this.#progress.outputs = p.outputs().map((s) => toProgressIO(s, this.#outputIds[s.index] ?? ''));
    return true;
  }

  #apply(): void {
    const s = this.#stats;
    const p = this.#progress;
    const now = this.#now();
    let advanced = false;
    let frames = 0;
    let bytes = 0;
    // Fields missing from a line keep their previous value (reference 7.7).
    if (!Number.isNaN(s.frame)) {
      frames = Math.max(0, s.frame - p.frame);
      p.frame = s.frame;
    }
    if (!Number.isNaN(s.sizeBytes)) {
      bytes = Math.max(0, s.sizeBytes - this.#sizeBytes);
      this.#sizeBytes = s.sizeBytes;
      p.size_kb = Math.floor(s.sizeBytes / 1024);
    }
    if (!Number.isNaN(s.time)) {
      // Audio-only runs have no frame counter; their clock moving is the sign of life.
      if (s.time > p.time) advanced = true;
      p.time = s.time;
    }
    if (frames > 0 || bytes > 0) advanced = true;
    if (s.q.length) {
      p.q = s.q[0]!;
      // ffmpeg prints one q= per video output stream, in output order.
      let k = 0;
      for (const io of p.outputs) {
        if (io.type !== 'video') continue;
        if (k >= s.q.length) break;
        io.q = s.q[k++]!;
      }
    }
    if (!Number.isNaN(s.speed)) p.speed = s.speed;
    if (!Number.isNaN(s.drop)) p.drop = s.drop;
    if (!Number.isNaN(s.dup)) p.dup = s.dup;

    this.#fps.add(frames, now);
    this.#bitrate.add(bytes * 8, now);
    // Until a full second is in the window, fall back to ffmpeg's own run averages.
    const fps = this.#fps.rate(now);
    if (!Number.isNaN(fps)) p.fps = fps;
    else if (!Number.isNaN(s.fps)) p.fps = s.fps;
    const bits = this.#bitrate.rate(now);
    if (!Number.isNaN(bits)) p.bitrate_kbit = bits / 1024;
    else if (!Number.isNaN(s.bitrateKbits)) p.bitrate_kbit = (s.bitrateKbits * 1000) / 1024;

    if (advanced) this.#lastProgressAt = now;
  }
}
