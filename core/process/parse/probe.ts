// Parses the stderr of a probe run, `ffmpeg <global options> (<input options> -i <address>)...` with no
// outputs (reference 7.9). ffmpeg prints the input descriptions and then fails for want of an output;
// the descriptions are all we need.
import { splitLines, stripLevel } from './lines.ts';
import { PreludeParser, type PreludeStream } from './prelude.ts';
import type { Probe, ProbeIO } from './schemas.ts';

function fromPrelude(s: PreludeStream): ProbeIO {
  return {
    url: s.address, format: s.format, index: s.index, stream: s.stream, language: s.language, type: s.type,
    codec: s.codec, coder: s.coder, bitrate_kbps: s.bitrateKbps, duration_sec: s.durationSec, fps: s.fps,
    pix_fmt: s.pixFmt, width: s.width, height: s.height, sampling_hz: s.samplingHz, layout: s.layout,
    channels: s.channels,
  };
}

const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : fallback);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** datarhei's patched ffmpeg describes its inputs as JSON in an `ffmpeg.inputs:` line; prefer that. */
function fromJson(json: string): ProbeIO[] | null {
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch {
    return null;
  }
  if (!Array.isArray(data)) return null;
  return data
    .filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null)
    .map((x) => ({
      url: str(x.url), format: str(x.format), index: num(x.index), stream: num(x.stream),
      language: str(x.language) || 'und', type: str(x.type), codec: str(x.codec), coder: str(x.coder),
      bitrate_kbps: num(x.bitrate_kbps), duration_sec: num(x.duration_sec), fps: num(x.fps),
      pix_fmt: str(x.pix_fmt), width: num(x.width), height: num(x.height), sampling_hz: num(x.sampling_hz),
      layout: str(x.layout), channels: num(x.channels),
    }));
}

/** Parses the whole captured stderr (text or lines) of a probe run. */
export function parseProbe(stderr: string | readonly string[]): Probe {
  const lines = typeof stderr === 'string' ? splitLines(stderr) : stderr;
  const log: string[] = [];
  const prelude = new PreludeParser();
  let json: ProbeIO[] | null = null;
  for (const line of lines) {
    if (!line.length) continue;
    const msg = stripLevel(line);
    if (msg.startsWith('avstream.progress:')) continue;
    log.push(line);
    if (msg.startsWith('ffmpeg.inputs:')) json ??= fromJson(msg.slice('ffmpeg.inputs:'.length));
    else prelude.feed(line);
  }
  return { streams: json ?? prelude.inputs().map(fromPrelude), log };
}
