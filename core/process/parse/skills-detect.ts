// Runs the media binary to find out what it can do (reference 7.10). Never throws: a missing or broken
// binary yields empty skills and an error message, and the caller decides (the Core refuses to start
// when the version is empty).
import { readFile, stat } from 'node:fs/promises';
import { directSpawn, runCollect, type Collected, type Spawn } from '../run-collect.ts';
import type { Skills, SkillsDevice, SkillsHWDevice } from './schemas.ts';
import {
  emptySkills, parseCodecs, parseDevices, parseFilters, parseFormats, parseHWAccels, parseProtocols, parseVersion,
} from './skills.ts';
import {
  parseAlsaCards, parseAlsaDevices, parseAvfoundationDevices, parseFramebuffer, parseV4l2Devices,
} from './skills-devices.ts';

export interface DetectOptions {
  /** Per invocation (default 10 s). */
  timeoutMs?: number;
  /** Called for each failure, besides collecting it. */
  onError?: (message: string) => void;
  /** How the programs are started (the core's confined spawn); default node's own. */
  spawn?: Spawn;
}

export interface DetectResult {
  skills: Skills;
  /** What went wrong, one message per failed step; empty when everything ran. */
  errors: string[];
}

// An empty environment, as the Core uses, so a user's locale or FFREPORT does not change the output.
// ffmpeg exits non-zero for `-list_devices` and similar; only a failed spawn or a timeout counts.
type Run = (file: string, args: readonly string[]) => Promise<Collected>;

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return '';
  }
}

async function alsaDevices(): Promise<SkillsHWDevice[]> {
  const cards = parseAlsaCards(await readText('/proc/asound/cards'));
  return parseAlsaDevices(await readText('/proc/asound/devices'), cards);
}

async function framebufferDevices(run: Run): Promise<SkillsHWDevice[]> {
  const out: SkillsHWDevice[] = [];
  for (let i = 0; i < 32; i++) {
    const path = `/dev/fb${i}`;
    try {
      await stat(path);
    } catch {
      break;
    }
    const { stdout } = await run('fbset', ['-s', '-fb', path]);
    out.push({ id: path, name: path, extra: parseFramebuffer(stdout), media: 'video' });
  }
  return out;
}

// Optional helper tools (v4l2-ctl, fbset) may be absent; that only means no devices of that kind.
async function hardware(run: Run, binary: string, id: string): Promise<SkillsHWDevice[]> {
  switch (id) {
    case 'avfoundation':
      if (process.platform !== 'darwin') return [];
      return parseAvfoundationDevices((await run(binary, ['-f', 'avfoundation', '-list_devices', 'true', '-i', ''])).stderr);
    case 'alsa':
      return process.platform === 'linux' ? alsaDevices() : [];
    case 'video4linux2':
      return parseV4l2Devices((await run('v4l2-ctl', ['--list-devices'])).stdout);
    case 'fbdev':
      return framebufferDevices(run);
    default:
      return [];
  }
}

/** Detects the skills and reports every failed step. */
export async function detectSkillsWithErrors(binary: string, options: DetectOptions = {}): Promise<DetectResult> {
  const timeout = options.timeoutMs ?? 10_000;
  const spawnFn = options.spawn ?? directSpawn;
  const run: Run = (file, args) => runCollect(spawnFn, file, args, timeout);
  const errors: string[] = [];
  const note = (message: string) => {
    errors.push(message);
    options.onError?.(message);
  };
  const skills = emptySkills();
  const version = await run(binary, ['-version']);
  if (version.error) {
    note(version.error);
    return { skills, errors };
  }
  skills.ffmpeg = parseVersion(version.stdout || version.stderr);
  if (!skills.ffmpeg.version) note(`${binary}: cannot parse the version from -version`);

  const [filters, hwaccels, codecs, formats, devices, protocols] = await Promise.all(
    ['-filters', '-hwaccels', '-codecs', '-formats', '-devices', '-protocols'].map((flag) => run(binary, [flag])),
  );
  for (const r of [filters, hwaccels, codecs, formats, devices, protocols]) if (r!.error) note(r!.error);
  skills.filter = parseFilters(filters!.stdout);
  skills.hwaccels = parseHWAccels(hwaccels!.stdout);
  skills.codecs = parseCodecs(codecs!.stdout);
  skills.formats = parseFormats(formats!.stdout);
  skills.protocols = parseProtocols(protocols!.stdout);
  skills.devices = parseDevices(devices!.stdout);

  // A device type listed both as demuxer and muxer shares one hardware list.
  const lists = new Map<string, Promise<SkillsHWDevice[]>>();
  const fill = async (d: SkillsDevice) => {
    if (!lists.has(d.id)) lists.set(d.id, hardware(run, binary, d.id).catch(() => []));
    d.devices = [...(await lists.get(d.id)!)];
  };
  await Promise.all([...skills.devices.demuxers, ...skills.devices.muxers].map(fill));
  return { skills, errors };
}

/** Detects the skills of `binary`; errors go to `options.onError` (see detectSkillsWithErrors). */
export async function detectSkills(binary: string, options: DetectOptions = {}): Promise<Skills> {
  return (await detectSkillsWithErrors(binary, options)).skills;
}
