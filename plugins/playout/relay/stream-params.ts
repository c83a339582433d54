// The stream parameters of a source, read from the `Output #0` block the source ffmpeg prints on
// stderr (its -c copy output holds exactly the mapped streams: first video, first audio). The error
// frame is encoded to match them and a stream switch is refused when they differ. Pure: fed one line
// at a time, tested on recorded lines.

export interface VideoParams {
  codec: string; width: number; height: number; fps: number; pixFmt: string;
  /** The codec profile in ffmpeg's words (`High`, `Constrained Baseline`), '' when not shown. */
  profile: string;
}
export interface AudioParams { codec: string; rate: number; layout: string }
export interface StreamParams { video?: VideoParams; audio?: AudioParams }

const RE_STREAM = /^\s*Stream #\d+:\d+(?:\[[^\]]*\])?(?:\([^)]*\))?: (Video|Audio): (.*)$/;
const RE_CODEC = /^([^\s,]+)/;
const RE_PROFILE = /^[^\s,]+ \(([A-Za-z][^)]*)\)/;
const RE_PIXFMT_SIZE = /, ([0-9A-Za-z_]+)(?:\([^)]*\))?, (\d+)x(\d+)/;
const RE_FPS = /, (\d+(?:\.\d+)?) fps/;
const RE_TBR = /, (\d+(?:\.\d+)?) tbr/;
const RE_AUDIO = /, (\d+) Hz, ([^,]+)/;

/** One `Stream #` line's parameters, or null when the line is not a video/audio stream line. */
export function parseStreamLine(line: string): { video?: VideoParams; audio?: AudioParams } | null {
  const m = RE_STREAM.exec(line);
  if (!m) return null;
  const detail = m[2]!;
  const codec = RE_CODEC.exec(detail)?.[1] ?? '';
  if (m[1] === 'Video') {
    const ps = RE_PIXFMT_SIZE.exec(detail);
    const fps = RE_FPS.exec(detail) ?? RE_TBR.exec(detail);
    return { video: { codec, profile: RE_PROFILE.exec(detail)?.[1] ?? '', pixFmt: ps?.[1] ?? '', width: Number(ps?.[2] ?? 0), height: Number(ps?.[3] ?? 0), fps: Number(fps?.[1] ?? 0) } };
  }
  const a = RE_AUDIO.exec(detail);
  return { audio: { codec, rate: Number(a?.[1] ?? 0), layout: a?.[2]?.trim() ?? '' } };
}

/**
 * Collects the first video and audio stream of `Output #0`; `push` returns the parameters once the block
 * has ended (the next unindented line), null before. A frame rate missing on the output side is taken
 * from the input's first video stream.
 */
export class StreamParamsReader {
  #section: 'input' | 'output' | '' = '';
  #inputFps = 0;
  #params: StreamParams = {};
  #done = false;

  push(line: string): StreamParams | null {
    if (this.#done) return null;
    if (/^Input #/.test(line)) { this.#section = 'input'; return null; }
    if (/^Output #0/.test(line)) { this.#section = 'output'; return null; }
    const s = parseStreamLine(line);
    if (s) {
      if (this.#section === 'input' && s.video && !this.#inputFps) this.#inputFps = s.video.fps;
      if (this.#section === 'output') {
        if (s.video && !this.#params.video) this.#params.video = s.video;
        if (s.audio && !this.#params.audio) this.#params.audio = s.audio;
      }
      return null;
    }
    if (this.#section === 'output' && !/^\s/.test(line) && (this.#params.video || this.#params.audio)) {
      this.#done = true;
      if (this.#params.video && !this.#params.video.fps) this.#params.video.fps = this.#inputFps || 25;
      return this.#params;
    }
    return null;
  }
}

/** Why a source with `next` cannot replace one with `cur` without the consumer noticing; null if it can. */
export function paramsMismatch(cur: StreamParams, next: StreamParams): string | null {
  const cv = cur.video;
  const nv = next.video;
  if (!!cv !== !!nv) return cv ? 'video stream missing' : 'unexpected video stream';
  if (cv && nv) {
    if (cv.codec !== nv.codec) return `video codec ${nv.codec} != ${cv.codec}`;
    if (cv.width !== nv.width || cv.height !== nv.height) return `video size ${nv.width}x${nv.height} != ${cv.width}x${cv.height}`;
    if (cv.pixFmt !== nv.pixFmt) return `pixel format ${nv.pixFmt} != ${cv.pixFmt}`;
    if (Math.abs(cv.fps - nv.fps) > 0.01) return `frame rate ${nv.fps} != ${cv.fps}`;
  }
  const ca = cur.audio;
  const na = next.audio;
  if (!!ca !== !!na) return ca ? 'audio stream missing' : 'unexpected audio stream';
  if (ca && na) {
    if (ca.codec !== na.codec) return `audio codec ${na.codec} != ${ca.codec}`;
    if (ca.rate !== na.rate) return `audio rate ${na.rate} != ${ca.rate}`;
    if (ca.layout !== na.layout) return `audio layout ${na.layout} != ${ca.layout}`;
  }
  return null;
}

/** A short text for logs and the clip cache key. */
export function describeParams(p: StreamParams): string {
  const v = p.video ? `${p.video.codec} ${p.video.width}x${p.video.height} ${p.video.pixFmt} ${p.video.fps}fps` : 'no video';
  const a = p.audio ? `${p.audio.codec} ${p.audio.rate}Hz ${p.audio.layout}` : 'no audio';
  return `${v}, ${a}`;
}
