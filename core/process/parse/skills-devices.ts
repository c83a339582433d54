// Pure parsers for the hardware lists behind ffmpeg's capture devices (reference 7.10): ALSA from
// /proc/asound, V4L2 from `v4l2-ctl --list-devices`, framebuffers from `fbset -s`, and AVFoundation from
// ffmpeg's own `-list_devices` output. Empty input gives an empty list.
import type { SkillsHWDevice } from './schemas.ts';

export interface AlsaCard {
  id: string;
  name: string;
}

const lines = (text: string) => text.split(/\r?\n/);

/** `/proc/asound/cards`: ` 0 [PCH            ]: HDA-Intel - HDA Intel PCH` */
export function parseAlsaCards(text: string): AlsaCard[] {
  const out: AlsaCard[] = [];
  for (const line of lines(text)) {
    const m = /^\s*(\d+) \[[^\]]*\]: (.*)$/.exec(line);
    if (m) out.push({ id: m[1]!, name: m[2]!.trim() });
  }
  return out;
}

/** `/proc/asound/devices`: ` 3: [ 0- 0]: digital audio capture`; only capture devices can be inputs. */
export function parseAlsaDevices(text: string, cards: readonly AlsaCard[]): SkillsHWDevice[] {
  const out: SkillsHWDevice[] = [];
  for (const line of lines(text)) {
    const m = /^\s*\d+: \[\s*(\d+)-\s*(\d+)\]: (.*)$/.exec(line);
    if (!m || m[3]!.trim() !== 'digital audio capture') continue;
    const card = cards.find((c) => c.id === m[1]);
    if (card) out.push({ id: `hw:${m[1]},${m[2]}`, name: card.name, extra: '', media: 'audio' });
  }
  return out;
}

/**
 * `v4l2-ctl --list-devices`: a `Name (bus info):` header, then indented `/dev/videoN` lines. The bus
 * info goes to `extra`, so two identical cameras can be told apart.
 */
export function parseV4l2Devices(text: string): SkillsHWDevice[] {
  const out: SkillsHWDevice[] = [];
  let name = '';
  let extra = '';
  for (const line of lines(text)) {
    const dev = /\/dev\/video\d+/.exec(line);
    if (dev) {
      if (name) out.push({ id: dev[0], name, extra, media: 'video' });
      continue;
    }
    const header = /^(.*)\((.*?)\):\s*$/.exec(line);
    if (header) {
      name = header[1]!.trim();
      extra = header[2]!;
    }
  }
  return out;
}

// bits per pixel and red/green/blue offsets -> ffmpeg pixel format
const FB_FORMATS: readonly [number, number, number, number, string][] = [
  [32, 0, 8, 16, 'rgba'], [32, 16, 8, 0, 'bgra'], [32, 8, 16, 24, 'argb'], [32, 3, 2, 8, 'abgr'],
  [24, 0, 8, 16, 'rgb24'], [24, 16, 8, 0, 'bgr24'], [16, 11, 5, 0, 'rgb565le'], [16, 0, 5, 11, 'rgb565be'],
];

const fbOffset = (field: string): number => {
  const [bits, offset] = field.split('/').map(Number);
  return bits && offset !== undefined && Number.isFinite(offset) ? offset : 0;
};

/** `fbset -s -fb /dev/fbN` to `extra`, e.g. `1920x1080 rgba`, or `1920x1080 (1920x2160) rgba` when virtual differs. */
export function parseFramebuffer(text: string): string {
  let geometry = '';
  let bpp = 0;
  let rgb: [number, number, number] | undefined;
  for (const line of lines(text)) {
    const g = /geometry (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(line);
    if (g) {
      geometry = `${g[1]}x${g[2]}`;
      if (g[1] !== g[3] || g[2] !== g[4]) geometry += ` (${g[3]}x${g[4]})`;
      bpp = Number(g[5]);
    }
    const c = /rgba (\d+\/\d+),(\d+\/\d+),(\d+\/\d+),(\d+\/\d+)/.exec(line);
    if (c) rgb = [fbOffset(c[1]!), fbOffset(c[2]!), fbOffset(c[3]!)];
  }
  if (!geometry || !bpp) return '';
  const [r, g, b] = rgb ?? [0, 0, 0];
  const f = FB_FORMATS.find(([fb, fr, fg, fbl]) => fb === bpp && fr === r && fg === g && fbl === b);
  return f ? `${geometry} ${f[4]}` : '';
}

/** `ffmpeg -f avfoundation -list_devices true -i ""` (stderr): `[AVFoundation indev @ 0x..] [0] FaceTime HD Camera`. */
export function parseAvfoundationDevices(text: string): SkillsHWDevice[] {
  const out: SkillsHWDevice[] = [];
  let media = '';
  for (const line of lines(text)) {
    if (line.includes('AVFoundation video devices')) media = 'video';
    else if (line.includes('AVFoundation audio devices')) media = 'audio';
    else if (media) {
      const m = /^\s*\[[^\]]*\] \[(\d+)\] (.*)$/.exec(line);
      if (m) out.push({ id: m[1]!, name: m[2]!.trim(), extra: '', media });
    }
  }
  return out;
}
