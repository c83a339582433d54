import t from 'tap';
import { readFileSync } from 'node:fs';
import { parseCoders } from '../../../../core/process/parse/skills.ts';
import { hardwareEncoders, hardwareKind, pickEncoder, presentDevices, type EncoderSkills } from '../../../../sdk/index.ts';

/*
 * Hardware encoders in the skills (issue 48.4), on recorded `ffmpeg -encoders` output (Debian 12's
 * ffmpeg lists NVENC, VAAPI and Quick Sync encoders whether or not the machine has the hardware)
 * and on a build without them; the devices are given, so no GPU is needed.
 */

const recorded = readFileSync(new URL('../../../fixtures/ffmpeg/encoders.txt', import.meta.url), 'utf8');
const skillsOf = (encoders: string): EncoderSkills => ({ codecs: parseCoders('', encoders) });

// a build without hardware encoders (the lines as ffmpeg prints them)
const SOFTWARE_ONLY = [
  'Encoders:', ' V..... = Video', ' ------',
  ' V....D libx264              libx264 H.264 / AVC / MPEG-4 AVC / MPEG-4 part 10 (codec h264)',
  ' V....D libx265              libx265 H.265 / HEVC (codec hevc)',
  ' A..... aac                  AAC (Advanced Audio Coding)',
].join('\n');

const NVIDIA = new Set(['/dev/nvidia0']);
const DRI = new Set(['/dev/dri/renderD128']);
const NONE = new Set<string>();

t.test('the recorded encoders: NVENC, VAAPI and Quick Sync are hardware encoders with their device', async (t) => {
  const skills = skillsOf(recorded);
  const h264 = skills.codecs.video.find((c) => c.id === 'h264');
  t.ok(h264?.encoders?.includes('libx264') && h264.encoders.includes('h264_nvenc'), 'parsed under the codec h264');
  const hw = hardwareEncoders(skills);
  const pick = (id: string) => hw.find((h) => h.id === id);
  t.same(pick('h264_nvenc'), { id: 'h264_nvenc', codec: 'h264', kind: 'nvenc', device: '/dev/nvidia0' });
  t.same(pick('h264_vaapi'), { id: 'h264_vaapi', codec: 'h264', kind: 'vaapi', device: '/dev/dri/renderD128' });
  t.same(pick('h264_qsv'), { id: 'h264_qsv', codec: 'h264', kind: 'qsv', device: '/dev/dri/renderD128' });
  t.same(pick('hevc_nvenc'), { id: 'hevc_nvenc', codec: 'hevc', kind: 'nvenc', device: '/dev/nvidia0' });
  t.same(pick('hevc_vaapi')?.codec, 'hevc');
  t.same(pick('hevc_qsv')?.kind, 'qsv');
  t.notOk(hw.some((h) => /^lib|v4l2m2m/.test(h.id)), 'software and V4L2 mem2mem encoders are not counted');
  t.equal(hardwareKind('libx264'), undefined);
  t.same(hardwareEncoders(skillsOf(SOFTWARE_ONLY)), [], 'a build without them has none');
});

t.test('auto takes a hardware encoder whose device is present, else the software one', async (t) => {
  const skills = skillsOf(recorded);
  t.equal(pickEncoder(skills, 'auto', NONE), 'libx264', 'no device: libx264');
  t.equal(pickEncoder(skills, 'auto', NVIDIA), 'h264_nvenc', 'an NVIDIA GPU: NVENC');
  t.equal(pickEncoder(skills, 'auto', DRI), 'h264_qsv', 'a render node: Quick Sync first, then VAAPI');
  t.equal(pickEncoder(skills, 'auto', new Set([...NVIDIA, ...DRI])), 'h264_nvenc', 'both: NVENC');
  t.equal(pickEncoder(skills, 'auto', DRI, 'hevc'), 'hevc_qsv', 'hevc');
  t.equal(pickEncoder(skills, 'auto', NONE, 'hevc'), 'libx265');
  const noQsv = skillsOf(recorded.split('\n').filter((l) => !l.includes('_qsv')).join('\n'));
  t.equal(pickEncoder(noQsv, 'auto', DRI), 'h264_vaapi', 'without Quick Sync in the build: VAAPI');
  t.equal(pickEncoder(skillsOf(SOFTWARE_ONLY), 'auto', new Set([...NVIDIA, ...DRI])), 'libx264', 'devices but no hardware encoder in the build');
});

t.test('a named encoder is used when listed and its device is present, else refused with the reason', async (t) => {
  const skills = skillsOf(recorded);
  t.equal(pickEncoder(skills, 'libx264', NONE), 'libx264');
  t.equal(pickEncoder(skills, 'h264_vaapi', DRI), 'h264_vaapi');
  t.throws(() => pickEncoder(skills, 'h264_nvenc', DRI), /h264_nvenc needs \/dev\/nvidia0/);
  t.throws(() => pickEncoder(skillsOf(SOFTWARE_ONLY), 'h264_nvenc', NVIDIA), /not in the encoder's skills/);
  t.same([...presentDevices((p) => p === '/dev/nvidia0')], ['/dev/nvidia0'], 'the devices looked for');
  t.same([...presentDevices(() => false)], []);
});
