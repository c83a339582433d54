import { existsSync } from 'node:fs';

/*
 * Hardware video encoders in the encoder's skills (`GET /api/v3/skills`, `ProcessesService.encoderSkills`)
 * and the choice of an encoder for a job (a ladder's rungs): `auto` takes a hardware encoder the
 * skills list whose device is present, else the software one. Pure but for `presentDevices`.
 */

/** The hardware behind an encoder, by its name's suffix (`h264_nvenc`, `hevc_vaapi`, `h264_qsv`). */
export type HardwareKind = 'nvenc' | 'vaapi' | 'qsv';

/**
 * The device node each kind needs (the first GPU; VAAPI and Quick Sync use the DRM render node).
 *
 * @example
 * HARDWARE_DEVICES.nvenc; // '/dev/nvidia0'
 */
export const HARDWARE_DEVICES: Readonly<Record<HardwareKind, string>> = Object.freeze({
  nvenc: '/dev/nvidia0', vaapi: '/dev/dri/renderD128', qsv: '/dev/dri/renderD128',
});

/** `auto` tries the kinds in this order. */
const PREFERENCE: readonly HardwareKind[] = ['nvenc', 'qsv', 'vaapi'];

/** The software encoder of each codec `auto` falls back to. */
const SOFTWARE: Readonly<Record<string, string>> = { h264: 'libx264', hevc: 'libx265' };

/** What of the skills an encoder choice reads (the engine's skills have this shape). */
export interface EncoderSkills {
  codecs: { video: ReadonlyArray<{ id: string; encoders: readonly string[] | null }> };
}

/** A hardware video encoder the skills list (`hardwareEncoders`). */
export interface HardwareEncoder {
  /** The encoder's name for `-c:v`, e.g. `h264_nvenc`. */
  id: string;
  /** The codec it makes (`h264`, `hevc`, ...). */
  codec: string;
  kind: HardwareKind;
  /** The device node it needs. */
  device: string;
}

/**
 * The hardware kind of an encoder name, or undefined for a software one.
 *
 * @example
 * hardwareKind('h264_vaapi'); // 'vaapi'
 * hardwareKind('libx264'); // undefined
 */
export function hardwareKind(encoder: string): HardwareKind | undefined {
  const m = /_(nvenc|vaapi|qsv)$/.exec(encoder);
  return m ? (m[1] as HardwareKind) : undefined;
}

/**
 * Every hardware video encoder the skills list, with its codec, kind and device.
 *
 * @example
 * hardwareEncoders({ codecs: { video: [{ id: 'h264', encoders: ['libx264', 'h264_nvenc'] }] } });
 * // [{ id: 'h264_nvenc', codec: 'h264', kind: 'nvenc', device: '/dev/nvidia0' }]
 */
export function hardwareEncoders(skills: EncoderSkills): HardwareEncoder[] {
  const out: HardwareEncoder[] = [];
  for (const c of skills.codecs.video) {
    for (const id of c.encoders ?? []) {
      const kind = hardwareKind(id);
      if (kind) out.push({ id, codec: c.id, kind, device: HARDWARE_DEVICES[kind] });
    }
  }
  return out;
}

/**
 * Which of the hardware devices exist on this machine (`exists` for tests).
 *
 * @example
 * presentDevices((p) => p === '/dev/nvidia0'); // Set { '/dev/nvidia0' }
 */
export function presentDevices(exists: (path: string) => boolean = existsSync): Set<string> {
  return new Set(Object.values(HARDWARE_DEVICES).filter((p) => exists(p)));
}

/**
 * The encoder to use for `codec` (`h264` or `hevc`). `auto`: the first hardware encoder of the
 * codec the skills list whose device is in `devices` (NVENC, then Quick Sync, then VAAPI), else the
 * software one (`libx264`, `libx265`). A named encoder is used as it is when the skills list it and
 * (for a hardware one) its device is present; otherwise this throws an Error saying why.
 *
 * @example
 * const skills = await ctx.deps.processes.encoderSkills();
 * const encoder = skills ? pickEncoder(skills, 'auto', presentDevices()) : 'libx264'; // 'h264_nvenc' on an NVIDIA machine
 */
export function pickEncoder(skills: EncoderSkills, want: 'auto' | (string & {}), devices: ReadonlySet<string>, codec = 'h264'): string {
  const listed = new Set(skills.codecs.video.flatMap((c) => (c.id === codec || want !== 'auto' ? c.encoders ?? [] : [])));
  if (want === 'auto') {
    const usable = hardwareEncoders(skills).filter((h) => h.codec === codec && listed.has(h.id) && devices.has(h.device));
    for (const kind of PREFERENCE) {
      const hit = usable.find((h) => h.kind === kind);
      if (hit) return hit.id;
    }
    return SOFTWARE[codec] ?? 'libx264';
  }
  if (!listed.has(want)) throw new Error(`encoder ${want} is not in the encoder's skills`);
  const kind = hardwareKind(want);
  if (kind && !devices.has(HARDWARE_DEVICES[kind])) throw new Error(`encoder ${want} needs ${HARDWARE_DEVICES[kind]}, which this machine does not have`);
  return want;
}
