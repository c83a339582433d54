// The stock ffmpeg stats line, e.g.
//   frame=  75 fps= 25 q=21.0 Lq=5.0 size=N/A time=00:00:03.01 bitrate=N/A dup=1 drop=2 speed=0.996x
//   size=     384kB time=00:00:24.55 bitrate= 128.0kbits/s speed=1.01x        (audio only)
// It arrives twice a second per process for the lifetime of the process, so it is scanned by hand:
// no regular expressions, no substrings, numbers read straight from the character codes, results
// written into a caller-owned object.

/** Values of one stats line; NaN marks a field that is absent or `N/A`. */
export interface StatsLine {
  frame: number;
  fps: number;
  /** One entry per encoded video output stream, in output order (ffmpeg prints one `q=` each). */
  q: number[];
  sizeBytes: number;
  /** Seconds. */
  time: number;
  /** As ffmpeg prints it: kbit/s of 1000 bit/s, averaged over the whole run. */
  bitrateKbits: number;
  speed: number;
  dup: number;
  drop: number;
}

export function createStatsLine(): StatsLine {
  return { frame: NaN, fps: NaN, q: [], sizeBytes: NaN, time: NaN, bitrateKbits: NaN, speed: NaN, dup: NaN, drop: NaN };
}

const SPACE = 32;
const DOT = 46;
const MINUS = 45;
const COLON = 58;
const L = 76;

const isDigit = (c: number) => c >= 48 && c <= 57;

/**
 * Whether the message starting at `start` is a stats line. Video runs start with `frame=`; audio-only
 * runs start with `size=` (the original did not know those, so audio-only processes looked stalled).
 */
export function isStatsLine(line: string, start = 0): boolean {
  return line.startsWith('frame=', start) || line.startsWith('size=', start) || line.startsWith('Lsize=', start);
}

/** The last report marks one key with a leading `L` (`Lsize=`, `Lq=`); accept both spellings. */
function keyIs(line: string, ks: number, eq: number, name: string): boolean {
  const len = eq - ks;
  if (len === name.length) return line.startsWith(name, ks);
  return len === name.length + 1 && line.charCodeAt(ks) === L && line.startsWith(name, ks + 1);
}

/** Reads numbers from a line; `end` is where the last read stopped. Reused, so it allocates nothing. */
class NumberReader {
  end = 0;
  /** What `#decimal` read: its digits as one integer, the power of ten to divide it by, how many digits. */
  #units = 0;
  #scale = 1;
  #digits = 0;

  /** Reads `digits[.digits]` at `i` into `#units`, `#scale` and `#digits`; returns where it stopped. */
  #decimal(s: string, i: number): number {
    let units = 0;
    let scale = 1;
    let digits = 0;
    let c = s.charCodeAt(i);
    while (isDigit(c)) {
      units = units * 10 + (c - 48);
      digits++;
      c = s.charCodeAt(++i);
    }
    if (c === DOT) {
      c = s.charCodeAt(++i);
      while (isDigit(c)) {
        units = units * 10 + (c - 48);
        scale *= 10;
        digits++;
        c = s.charCodeAt(++i);
      }
    }
    this.#units = units;
    this.#scale = scale;
    this.#digits = digits;
    return i;
  }

  /** A decimal like `-1.0`, `0.999`, `25`, `1.2e+03`; NaN when there is no digit (`N/A`). */
  float(s: string, i: number): number {
    let neg = false;
    if (s.charCodeAt(i) === MINUS) {
      neg = true;
      i++;
    }
    i = this.#decimal(s, i);
    const c = s.charCodeAt(i);
    this.end = i;
    if (this.#digits === 0) return NaN;
    // One division by a power of ten rounds exactly like parseFloat for the short values ffmpeg prints.
    let value = this.#units / this.#scale;
    if ((c === 101 || c === 69) /* e E */) {
      let j = i + 1;
      let expNeg = false;
      const sign = s.charCodeAt(j);
      if (sign === MINUS || sign === 43 /* + */) {
        expNeg = sign === MINUS;
        j++;
      }
      let exp = 0;
      let expDigits = 0;
      while (isDigit(s.charCodeAt(j))) {
        exp = exp * 10 + (s.charCodeAt(j) - 48);
        expDigits++;
        j++;
      }
      if (expDigits) {
        value = expNeg ? value / 10 ** exp : value * 10 ** exp;
        this.end = j;
      }
    }
    return neg ? -value : value;
  }

  /** `H+:MM:SS.cc` to seconds; NaN for `N/A` and for negative times printed before the first packet. */
  clock(s: string, i: number): number {
    if (s.charCodeAt(i) === MINUS) {
      this.end = i + 1;
      return NaN;
    }
    const h = this.float(s, i);
    if (Number.isNaN(h) || s.charCodeAt(this.end) !== COLON) return NaN;
    const m = this.float(s, this.end + 1);
    if (Number.isNaN(m) || s.charCodeAt(this.end) !== COLON) return NaN;
    // Seconds with their fraction as one integer, so 00:03:58.44 gives exactly 238.44.
    if (!isDigit(s.charCodeAt(this.end + 1))) return NaN;
    this.end = this.#decimal(s, this.end + 1);
    const scale = this.#scale;
    return ((h * 3600 + m * 60) * scale + this.#units) / scale;
  }
}

// Scratch state only: parseStatsLine is synchronous, so one reader can serve every parser.
const reader = new NumberReader();

/** Multiplier for a size unit right after the number: `kB` and `KiB` (ffmpeg 7) are both 1024 bytes. */
function sizeUnit(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === 107 /* k */ || c === 75 /* K */) return 1024;
  if (c === 77 /* M */) return 1024 * 1024;
  if (c === 71 /* G */) return 1024 * 1024 * 1024;
  return 1;
}

/**
 * Parses the stats line in `line` from `start` into `out`, which is cleared first. Returns false
 * (leaving `out` cleared) when the text is not a stats line.
 */
export function parseStatsLine(line: string, out: StatsLine, start = 0): boolean {
  out.frame = out.fps = out.sizeBytes = out.time = out.bitrateKbits = out.speed = out.dup = out.drop = NaN;
  out.q.length = 0;
  if (!isStatsLine(line, start)) return false;
  let pos = start;
  for (;;) {
    const eq = line.indexOf('=', pos);
    if (eq < 0) break;
    let ks = eq;
    while (ks > pos && line.charCodeAt(ks - 1) !== SPACE) ks--;
    let v = eq + 1;
    while (line.charCodeAt(v) === SPACE) v++;
    reader.end = v;
    if (keyIs(line, ks, eq, 'frame')) out.frame = reader.float(line, v);
    else if (keyIs(line, ks, eq, 'q')) out.q.push(reader.float(line, v));
    else if (keyIs(line, ks, eq, 'size')) out.sizeBytes = reader.float(line, v) * sizeUnit(line, reader.end);
    else if (keyIs(line, ks, eq, 'time')) out.time = reader.clock(line, v);
    else if (keyIs(line, ks, eq, 'speed')) out.speed = reader.float(line, v);
    else if (keyIs(line, ks, eq, 'fps')) out.fps = reader.float(line, v);
    else if (keyIs(line, ks, eq, 'bitrate')) out.bitrateKbits = reader.float(line, v);
    else if (keyIs(line, ks, eq, 'drop')) out.drop = reader.float(line, v);
    else if (keyIs(line, ks, eq, 'dup')) out.dup = reader.float(line, v);
    // Unknown keys (skip=, elapsed=, Lq= on older builds...) are stepped over.
    pos = Math.max(reader.end, eq + 1);
  }
  return true;
}
