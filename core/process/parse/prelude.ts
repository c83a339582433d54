// Reads the stream descriptions ffmpeg prints before it starts working (the "prelude"): the
// `Input #`/`Output #` blocks, their `Stream #` lines and the `Stream mapping:` block. It is fed one line
// at a time, so the progress parser never has to keep the prelude text just to parse it later.
import { stripLevel } from './lines.ts';

export interface PreludeStream {
  address: string;
  format: string;
  index: number;
  stream: number;
  language: string;
  type: string;
  codec: string;
  coder: string;
  bitrateKbps: number;
  durationSec: number;
  fps: number;
  pixFmt: string;
  width: number;
  height: number;
  samplingHz: number;
  layout: string;
  channels: number;
}

// Format names may hold commas (`mov,mp4,m4a,3gp,3g2,mj2`) but never ", "; the address runs to the
// last `'` because ffmpeg prints it unescaped.
const RE_HEADER = /^(Input|Output) #(\d+), (.*?), (?:from|to) '(.*)'/;
const RE_DURATION = /^\s*Duration: (\d+):(\d+):(\d+)(?:\.(\d+))?/;
// `Stream #3:0(eng):`, `Stream #4:0[0x100]:`, and since ffmpeg 6 `Stream #0:1[0x2](eng):`
const RE_STREAM = /^\s*Stream #(\d+):(\d+)(?:\[[^\]]*\])?(?:\(([^)]*)\))?: ([A-Za-z]+): (.*)$/;
const RE_CODEC = /^([^\s,]+)/;
const RE_PIXFMT_SIZE = /, ([0-9A-Za-z_]+)(?:\([^)]*\))?, (\d+)x(\d+)/;
const RE_FPS = /, (\d+(?:\.\d+)?) fps/;
const RE_AUDIO = /, (\d+) Hz, ([^,]+)/;
const RE_BITRATE = /, (\d+) kb\/s/;
// `Stream #0:0 -> #1:0 (rawvideo (native) -> mpeg4 (native))`, `Stream #0:0 -> #0:0 (copy)`,
// and for filter graphs `scale (graph 0) -> Stream #0:0 (libx264)`.
const RE_MAP_TARGET = /-> (?:Stream )?#(\d+):(\d+)/;
const RE_MAP_SOURCE = /^\s*Stream #(\d+):(\d+)/;
const RE_MAP_TRANSCODE = /\((\S+) \((\S+)\) -> (\S+) \((\S+)\)\)\s*$/;
const RE_MAP_GRAPH_CODER = /-> Stream #\d+:\d+ \((\S+)\)/;
const RE_MAP_GRAPH_DECODER = /^\s*Stream #\d+:\d+ \((\S+)\) ->/;

const CHANNELS: Record<string, number> = {
  mono: 1, stereo: 2, '2.1': 3, '3.0': 3, '3.0(back)': 3, '4.0': 4, quad: 4, 'quad(side)': 4, '3.1': 4,
  '5.0': 5, '5.0(side)': 5, '4.1': 5, '5.1': 6, '5.1(side)': 6, '6.0': 6, '6.0(front)': 6, hexagonal: 6,
  '6.1': 7, '6.1(back)': 7, '6.1(front)': 7, '7.0': 7, '7.0(front)': 7, '7.1': 8, '7.1(wide)': 8,
  '7.1(wide-side)': 8, octagonal: 8, downmix: 2,
};

/** Channel count implied by an ffmpeg layout name (`stereo`, `5.1(side)`, `3 channels`); 0 if unknown. */
export function channelsOfLayout(layout: string): number {
  const known = CHANNELS[layout];
  if (known !== undefined) return known;
  const m = /^(\d+) channels/.exec(layout);
  return m ? Number(m[1]) : 0;
}

/** `HH:MM:SS.cc` parts to seconds without the rounding noise of summing floats. */
export function clockToSeconds(h: string, m: string, s: string, frac: string | undefined): number {
  const whole = Number(h) * 3600 + Number(m) * 60 + Number(s);
  return frac ? Number(`${whole}.${frac}`) : whole;
}

export function parseStreamLine(line: string): Omit<PreludeStream, 'address' | 'format' | 'durationSec'> | null {
  const m = RE_STREAM.exec(line);
  if (!m) return null;
  const type = m[4]!.toLowerCase();
  const detail = m[5]!;
  const lang = m[3] ?? '';
  const s = {
    index: Number(m[1]), stream: Number(m[2]), language: /^[a-z]{3}$/.test(lang) ? lang : 'und', type,
    codec: RE_CODEC.exec(detail)?.[1] ?? '', coder: '', bitrateKbps: 0, fps: 0, pixFmt: '', width: 0,
    height: 0, samplingHz: 0, layout: '', channels: 0,
  };
  const br = RE_BITRATE.exec(detail);
  if (br) s.bitrateKbps = Number(br[1]);
  if (type === 'video') {
    const v = RE_PIXFMT_SIZE.exec(detail);
    if (v) {
      s.pixFmt = v[1]!;
      s.width = Number(v[2]);
      s.height = Number(v[3]);
    }
    const fps = RE_FPS.exec(detail);
    if (fps) s.fps = Number(fps[1]);
  } else if (type === 'audio') {
    const a = RE_AUDIO.exec(detail);
    if (a) {
      s.samplingHz = Number(a[1]);
      s.layout = a[2]!.trim();
      s.channels = channelsOfLayout(s.layout);
    }
  }
  return s;
}

const byPosition = (a: PreludeStream, b: PreludeStream) => a.index - b.index || a.stream - b.stream;

export class PreludeParser {
  readonly #inputs: PreludeStream[] = [];
  readonly #outputs: PreludeStream[] = [];
  #block: 'Input' | 'Output' | '' = '';
  #format = '';
  #address = '';
  #duration = 0;
  #inMapping = false;
  #sawMapping = false;
  #mapped = 0;
  // decoder/encoder names learned from the mapping, keyed `index:stream`
  readonly #inCoders = new Map<string, string>();
  readonly #outCoders = new Map<string, string>();

  /** Whether a `Stream mapping:` block was seen (it is missing when the log level hides info lines). */
  get sawMapping(): boolean {
    return this.#sawMapping;
  }

  /** Number of output streams the mapping announced. */
  get mappedOutputs(): number {
    return this.#mapped;
  }

  get outputCount(): number {
    return this.#outputs.length;
  }

  feed(raw: string): void {
    const line = stripLevel(raw);
    if (this.#inMapping) {
      // The mapping lines are indented; the first unindented line ends the block.
      const c = line.charCodeAt(0);
      if (c === 32 || c === 9) return this.#mapLine(line);
      this.#inMapping = false;
    }
    if (line.startsWith('Stream mapping:')) {
      this.#inMapping = true;
      this.#sawMapping = true;
      return;
    }
    const header = RE_HEADER.exec(line);
    if (header) {
      this.#block = header[1] as 'Input' | 'Output';
      this.#format = header[3]!;
      this.#address = header[4]!;
      this.#duration = 0;
      return;
    }
    if (!this.#block) return;
    const d = RE_DURATION.exec(line);
    if (d) {
      this.#duration = clockToSeconds(d[1]!, d[2]!, d[3]!, d[4]);
      return;
    }
    const s = parseStreamLine(line);
    if (!s) return;
    const io: PreludeStream = { ...s, address: this.#address, format: this.#format, durationSec: this.#duration };
    if (this.#block === 'Input') this.#inputs.push(io);
    else this.#outputs.push(io);
  }

  /** Input streams in ffmpeg order, with the decoder names the mapping revealed. */
  inputs(): PreludeStream[] {
    return this.#withCoders(this.#inputs, this.#inCoders);
  }

  /** Output streams in ffmpeg order (ffmpeg may print `Output #1` before `Output #0`). */
  outputs(): PreludeStream[] {
    return this.#withCoders(this.#outputs, this.#outCoders);
  }

  #withCoders(list: PreludeStream[], coders: Map<string, string>): PreludeStream[] {
    return list
      .map((io) => ({ ...io, coder: coders.get(`${io.index}:${io.stream}`) ?? io.coder }))
      .sort(byPosition);
  }

  #mapLine(line: string): void {
    const source = RE_MAP_SOURCE.exec(line);
    const inKey = source ? `${source[1]}:${source[2]}` : '';
    const target = RE_MAP_TARGET.exec(line);
    if (!target) {
      // An input feeding a filter graph, `Stream #0:0 (h264) -> scale`: not an output stream.
      const dec = RE_MAP_GRAPH_DECODER.exec(line);
      if (inKey && dec) this.#inCoders.set(inKey, dec[1]!);
      return;
    }
    this.#mapped++;
    const outKey = `${target[1]}:${target[2]}`;
    if (/\(copy\)\s*$/.test(line)) {
      this.#outCoders.set(outKey, 'copy');
      if (inKey) this.#inCoders.set(inKey, 'copy');
      return;
    }
    const t = RE_MAP_TRANSCODE.exec(line);
    if (t) {
      // `native` means ffmpeg's own implementation, which carries the codec's name.
      if (inKey) this.#inCoders.set(inKey, t[2] === 'native' ? t[1]! : t[2]!);
      this.#outCoders.set(outKey, t[4] === 'native' ? t[3]! : t[4]!);
      return;
    }
    const g = RE_MAP_GRAPH_CODER.exec(line);
    if (g) this.#outCoders.set(outKey, g[1]!);
  }
}
