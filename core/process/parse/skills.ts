// Pure parsers for what ffmpeg says about itself (reference 5.10 and 7.10): `-version`, `-filters`,
// `-hwaccels`, `-codecs` (or `-decoders` + `-encoders`), `-formats` (or `-demuxers`/`-muxers`),
// `-devices` and `-protocols`. Each takes the program's output as text; skills-detect.ts runs it.
import type { Skills, SkillsCodec, SkillsDevice, SkillsFilter, SkillsFormat, SkillsHWAccel, SkillsLibrary, SkillsProtocol } from './schemas.ts';

export function emptySkills(): Skills {
  return {
    ffmpeg: { version: '', compiler: '', configuration: '', libraries: [] },
    filter: [],
    hwaccels: [],
    codecs: { audio: [], video: [], subtitle: [] },
    devices: { demuxers: [], muxers: [] },
    formats: { demuxers: [], muxers: [] },
    protocols: { input: [], output: [] },
  };
}

const lines = (text: string) => text.split(/\r?\n/);

/**
 * `X.Y.Z` from the version ffmpeg reports: `.0` is added when missing (`4.4` -> `4.4.0`) and build
 * suffixes are dropped (`4.4.1-datarhei` -> `4.4.1`, Debian's `5.1.9-0+deb12u1` -> `5.1.9`). Git
 * release builds say `n6.1.1`. Returns '' for builds without a release number (`N-112233-g...`).
 */
export function normalizeVersion(raw: string): string {
  const m = /^(?:ffmpeg-|n)?(\d+)\.(\d+)(?:\.(\d+))?/.exec(raw.trim());
  if (!m) return '';
  return `${m[1]}.${m[2]}.${m[3] ?? '0'}`;
}

export function parseVersion(text: string): Skills['ffmpeg'] {
  const out: Skills['ffmpeg'] = { version: '', compiler: '', configuration: '', libraries: [] };
  for (const line of lines(text)) {
    const v = /^ffmpeg version (\S+)/.exec(line);
    if (v) {
      if (!out.version) out.version = normalizeVersion(v[1]!);
      continue;
    }
    const c = /^\s*built with (.*)$/.exec(line);
    if (c) {
      out.compiler ||= c[1]!.trim();
      continue;
    }
    const conf = /^\s*configuration: ?(.*)$/.exec(line);
    if (conf) {
      out.configuration ||= conf[1]!.trim();
      continue;
    }
    const lib = /^\s*(lib[a-z0-9_]+)\s+(\d+\.\s*\d+\.\s*\d+) \/\s*(\d+\.\s*\d+\.\s*\d+)/.exec(line);
    if (lib) out.libraries.push({ name: lib[1]!, compiled: lib[2]!, linked: lib[3]! } satisfies SkillsLibrary);
  }
  return out;
}

/** ` ..C acompressor       A->A       Audio compressor.` (flags: timeline, slice threads, commands) */
export function parseFilters(text: string): SkillsFilter[] {
  const out: SkillsFilter[] = [];
  for (const line of lines(text)) {
    const m = /^\s*[TSC.]{3}\s+([0-9A-Za-z_]+)\s+(\S+)\s+(.*)$/.exec(line);
    if (m && m[2]!.includes('->')) out.push({ id: m[1]!, name: m[3]!.trim() });
  }
  return out;
}

export function parseHWAccels(text: string): SkillsHWAccel[] {
  const out: SkillsHWAccel[] = [];
  let started = false;
  for (const line of lines(text)) {
    if (line.trim() === 'Hardware acceleration methods:') started = true;
    else if (started && /^[A-Za-z0-9_]+$/.test(line.trim())) out.push({ id: line.trim(), name: line.trim() });
  }
  return out;
}

function codecBucket(codecs: Skills['codecs'], type: string): SkillsCodec[] | undefined {
  return type === 'V' ? codecs.video : type === 'A' ? codecs.audio : type === 'S' ? codecs.subtitle : undefined;
}

const listIn = (desc: string, what: string): string[] | undefined => {
  const m = new RegExp(`\\(${what}: ([^)]*)\\)`).exec(desc);
  return m ? m[1]!.trim().split(/\s+/).filter(Boolean) : undefined;
};

/**
 * ` DEV.LS h264  H.264 / AVC (decoders: h264 h264_qsv ) (encoders: libx264 h264_nvenc )`. Decoders is
 * null unless the codec can be decoded; then it is the listed decoders, or `[id]` when none is listed
 * (the native one carries the codec's name). The same for encoders.
 */
export function parseCodecs(text: string): Skills['codecs'] {
  const out: Skills['codecs'] = { audio: [], video: [], subtitle: [] };
  for (const line of lines(text)) {
    const m = /^\s*([D.])([E.])([VASDT])[I.][L.][S.]\s+([0-9A-Za-z_]+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const bucket = codecBucket(out, m[3]!);
    if (!bucket) continue;
    const id = m[4]!;
    const desc = m[5]!;
    bucket.push({
      id,
      name: desc.replace(/\((?:de|en)coders: [^)]*\)/g, '').trim(),
      encoders: m[2] === 'E' ? (listIn(desc, 'encoders') ?? [id]) : null,
      decoders: m[1] === 'D' ? (listIn(desc, 'decoders') ?? [id]) : null,
    });
  }
  return out;
}

/** Builds the codec lists from `-decoders` and `-encoders` (` V....D libx264  libx264 H.264 (codec h264)`). */
export function parseCoders(decoders: string, encoders: string): Skills['codecs'] {
  const out: Skills['codecs'] = { audio: [], video: [], subtitle: [] };
  const byId = new Map<string, SkillsCodec>();
  const add = (text: string, kind: 'decoders' | 'encoders') => {
    for (const line of lines(text)) {
      const m = /^\s*([VAS])[.A-Z]{5}\s+([0-9A-Za-z_]+)\s+(.*)$/.exec(line);
      if (!m) continue;
      const coder = m[2]!;
      const codecMatch = /\(codec (\S+)\)\s*$/.exec(m[3]!);
      const id = codecMatch ? codecMatch[1]! : coder;
      const name = m[3]!.replace(/\(codec \S+\)\s*$/, '').trim();
      let codec = byId.get(`${m[1]}:${id}`);
      if (!codec) {
        codec = { id, name, encoders: null, decoders: null };
        byId.set(`${m[1]}:${id}`, codec);
        codecBucket(out, m[1]!)!.push(codec);
      } else if (coder === id) {
        codec.name = name; // the native coder describes the codec best
      }
      (codec[kind] ??= []).push(coder);
    }
  };
  add(decoders, 'decoders');
  add(encoders, 'encoders');
  return out;
}

/** Lines ` DE flv  FLV (Flash Video)`; the id is the first of a comma list (`video4linux2,v4l2`). */
function parseFlagged<T>(text: string, make: (id: string, name: string) => T): { demuxers: T[]; muxers: T[] } {
  const out = { demuxers: [] as T[], muxers: [] as T[] };
  for (const line of lines(text)) {
    const m = /^\s*([D ])([E ])[d ]?\s+([0-9A-Za-z_,]+)(?:\s+(.*))?$/.exec(line);
    if (!m || (m[1] !== 'D' && m[2] !== 'E')) continue;
    const item = make(m[3]!.split(',')[0]!, (m[4] ?? '').trim());
    if (m[1] === 'D') out.demuxers.push(item);
    if (m[2] === 'E') out.muxers.push(item);
  }
  return out;
}

/** `-formats`, or the output of `-demuxers` / `-muxers` (each fills its own side). */
export function parseFormats(text: string): Skills['formats'] {
  return parseFlagged(text, (id, name): SkillsFormat => ({ id, name }));
}

/** `-devices`; the hardware behind each device type is filled in by skills-detect.ts. */
export function parseDevices(text: string): Skills['devices'] {
  return parseFlagged(text, (id, name): SkillsDevice => ({ id, name, devices: [] }));
}

export function parseProtocols(text: string): Skills['protocols'] {
  const out: Skills['protocols'] = { input: [], output: [] };
  let side: SkillsProtocol[] | undefined;
  for (const line of lines(text)) {
    const t = line.trim();
    if (t === 'Input:') side = out.input;
    else if (t === 'Output:') side = out.output;
    else if (side && /^[0-9A-Za-z_.+-]+$/.test(t)) side.push({ id: t, name: t });
  }
  return out;
}
