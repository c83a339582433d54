import t from 'tap';
import { readFileSync } from 'node:fs';
import { Value } from '@sinclair/typebox/value';
import {
  emptySkills, normalizeVersion, parseCoders, parseCodecs, parseDevices, parseFilters, parseFormats, parseHWAccels,
  parseProtocols, parseVersion,
} from '../../../../core/process/parse/skills.ts';
import {
  parseAlsaCards, parseAlsaDevices, parseAvfoundationDevices, parseFramebuffer, parseV4l2Devices,
} from '../../../../core/process/parse/skills-devices.ts';
import { SkillsSchema } from '../../../../core/process/parse/schemas.ts';

const fixture = (name: string) => readFileSync(new URL(`../../../fixtures/ffmpeg/${name}`, import.meta.url), 'utf8');

t.test('version normalisation', async (t) => {
  const cases: [string, string][] = [
    ['4.3.1', '4.3.1'],
    ['4.4', '4.4.0'],
    ['4.4.1-datarhei', '4.4.1'],
    ['5.1.9-0+deb12u1', '5.1.9'],
    ['4.4.2-0ubuntu0.22.04.1', '4.4.2'],
    ['6.0-static', '6.0.0'],
    ['n6.1.1', '6.1.1'],
    ['ffmpeg-4.2', '4.2.0'],
    ['N-113180-g1c6ffde4a2', ''],
    ['', ''],
  ];
  for (const [raw, want] of cases) t.equal(normalizeVersion(raw), want, raw || '(empty)');
});

t.test('-version (recorded, Debian build)', async (t) => {
  const v = parseVersion(fixture('version.txt'));
  t.equal(v.version, '5.1.9');
  t.equal(v.compiler, 'gcc 12 (Debian 12.2.0-14+deb12u1)');
  t.match(v.configuration, /^--prefix=\/usr --extra-version=0\+deb12u1 .* --enable-shared$/);
  t.equal(v.libraries.length, 8);
  t.same(v.libraries[0], { name: 'libavutil', compiled: '57. 28.100', linked: '57. 28.100' });
  t.same(v.libraries[3], { name: 'libavdevice', compiled: '59.  7.100', linked: '59.  7.100' });
});

t.test('-version of a datarhei build with the banner indented', async (t) => {
  const v = parseVersion(`ffmpeg version 4.4.1-datarhei Copyright (c) 2000-2021 the FFmpeg developers
  built with gcc 10.3.1 (Alpine 10.3.1_git20211027) 20211027
  configuration: --extra-version=datarhei --prefix=/usr
  libavutil      56. 70.100 / 56. 70.100
  libavresample   4.  0.  0 /  4.  0.  0
`);
  t.same(v, {
    version: '4.4.1', compiler: 'gcc 10.3.1 (Alpine 10.3.1_git20211027) 20211027', configuration: '--extra-version=datarhei --prefix=/usr',
    libraries: [{ name: 'libavutil', compiled: '56. 70.100', linked: '56. 70.100' }, { name: 'libavresample', compiled: '4.  0.  0', linked: '4.  0.  0' }],
  });
});

t.test('-filters (recorded)', async (t) => {
  const filters = parseFilters(fixture('filters.txt'));
  t.equal(filters.length, 527);
  t.same(filters[0], { id: 'abench', name: 'Benchmark part of a filtergraph.' });
  t.same(filters.find((f) => f.id === 'anullsrc'), { id: 'anullsrc', name: 'Null audio source, return empty audio frames.' });
  t.same(filters.find((f) => f.id === 'testsrc2'), { id: 'testsrc2', name: 'Generate another test pattern.' });
  t.notOk(filters.some((f) => f.id === 'A' || f.name.includes('=')), 'legend lines are skipped');
});

t.test('-codecs (recorded)', async (t) => {
  const codecs = parseCodecs(fixture('codecs.txt'));
  t.same([codecs.video.length, codecs.audio.length, codecs.subtitle.length], [265, 194, 26]);
  t.same(codecs.video.find((c) => c.id === 'h264'), {
    id: 'h264', name: 'H.264 / AVC / MPEG-4 AVC / MPEG-4 part 10',
    encoders: ['libx264', 'libx264rgb', 'h264_nvenc', 'h264_omx', 'h264_qsv', 'h264_v4l2m2m', 'h264_vaapi'],
    decoders: ['h264', 'h264_v4l2m2m', 'h264_qsv', 'h264_cuvid'],
  });
  t.same(codecs.audio.find((c) => c.id === 'aac'), { id: 'aac', name: 'AAC (Advanced Audio Coding)', encoders: ['aac'], decoders: ['aac', 'aac_fixed'] });
  t.same(codecs.video.find((c) => c.id === '012v'), { id: '012v', name: 'Uncompressed 4:2:2 10-bit', encoders: null, decoders: ['012v'] }, 'decode only');
  t.same(codecs.subtitle.find((c) => c.id === 'subrip')?.encoders, ['srt', 'subrip']);
  t.notOk([...codecs.video, ...codecs.audio, ...codecs.subtitle].some((c) => c.id === 'bin_data'), 'data codecs are left out');
});

t.test('-decoders and -encoders instead of -codecs', async (t) => {
  const codecs = parseCoders(
    ` V....D h264                 H.264 / AVC / MPEG-4 AVC / MPEG-4 part 10
 V....D h264_qsv             H264 video (Intel Quick Sync Video acceleration) (codec h264)
 A....D aac                  AAC (Advanced Audio Coding)
 S..... srt                  SubRip subtitle (codec subrip)`,
    ` V....D libx264              libx264 H.264 / AVC / MPEG-4 AVC / MPEG-4 part 10 (codec h264)
 A..... aac                  AAC (Advanced Audio Coding)
 V..... = Video`,
  );
  t.same(codecs.video, [{ id: 'h264', name: 'H.264 / AVC / MPEG-4 AVC / MPEG-4 part 10', decoders: ['h264', 'h264_qsv'], encoders: ['libx264'] }]);
  t.same(codecs.audio, [{ id: 'aac', name: 'AAC (Advanced Audio Coding)', decoders: ['aac'], encoders: ['aac'] }]);
  t.same(codecs.subtitle, [{ id: 'subrip', name: 'SubRip subtitle', decoders: ['srt'], encoders: null }]);
});

t.test('-formats (recorded) and -demuxers style lists', async (t) => {
  const formats = parseFormats(fixture('formats.txt'));
  t.same([formats.demuxers.length, formats.muxers.length], [351, 183]);
  t.same(formats.demuxers.find((f) => f.id === 'flv'), { id: 'flv', name: 'FLV (Flash Video)' });
  t.same(formats.demuxers.find((f) => f.id === 'mov'), { id: 'mov', name: 'QuickTime / MOV' }, 'first of mov,mp4,m4a,...');
  t.same(formats.muxers.find((f) => f.id === 'hls'), { id: 'hls', name: 'Apple HTTP Live Streaming' });
  t.notOk(formats.demuxers.some((f) => f.id === '='));
  const demuxers = parseFormats('Demuxers:\n D. = Demuxing supported\n .E = Muxing supported\n --\n D  flv             FLV (Flash Video)\n');
  t.same(demuxers, { demuxers: [{ id: 'flv', name: 'FLV (Flash Video)' }], muxers: [] });
});

t.test('-devices (recorded)', async (t) => {
  const devices = parseDevices(fixture('devices.txt'));
  t.same(devices.demuxers.map((d) => d.id), ['alsa', 'fbdev', 'iec61883', 'jack', 'kmsgrab', 'lavfi', 'libcdio', 'libdc1394', 'openal', 'oss', 'pulse', 'video4linux2', 'x11grab']);
  t.same(devices.muxers.map((d) => d.id), ['alsa', 'caca', 'fbdev', 'opengl', 'oss', 'pulse', 'sdl', 'video4linux2', 'xv']);
  t.same(devices.demuxers.find((d) => d.id === 'libcdio'), { id: 'libcdio', name: '', devices: [] });
});

t.test('-protocols and -hwaccels (recorded)', async (t) => {
  const protocols = parseProtocols(fixture('protocols.txt'));
  t.same([protocols.input.length, protocols.output.length], [39, 31]);
  t.same(protocols.input.slice(0, 3), [{ id: 'async', name: 'async' }, { id: 'bluray', name: 'bluray' }, { id: 'cache', name: 'cache' }]);
  t.ok(protocols.output.some((p) => p.id === 'rtmp'));
  t.notOk(protocols.output.some((p) => p.id === 'bluray'), 'read-only protocols are inputs only');
  t.same(parseHWAccels(fixture('hwaccels.txt')).map((h) => h.id), ['vdpau', 'cuda', 'vaapi', 'qsv', 'drm', 'opencl', 'vulkan']);
  t.same(parseHWAccels('vaapi\n'), [], 'nothing before the heading counts');
});

t.test('everything together matches the Skills schema', async (t) => {
  const skills = emptySkills();
  t.ok(Value.Check(SkillsSchema, skills));
  skills.ffmpeg = parseVersion(fixture('version.txt'));
  skills.filter = parseFilters(fixture('filters.txt'));
  skills.codecs = parseCodecs(fixture('codecs.txt'));
  skills.formats = parseFormats(fixture('formats.txt'));
  skills.devices = parseDevices(fixture('devices.txt'));
  skills.protocols = parseProtocols(fixture('protocols.txt'));
  skills.hwaccels = parseHWAccels(fixture('hwaccels.txt'));
  t.ok(Value.Check(SkillsSchema, skills));
});

t.test('hardware device lists', async (t) => {
  const cards = parseAlsaCards(' 0 [PCH            ]: HDA-Intel - HDA Intel PCH\n                      HDA Intel PCH at 0xf7f10000 irq 33\n 1 [Camera         ]: USB-Audio - USB Camera\n');
  t.same(cards, [{ id: '0', name: 'HDA-Intel - HDA Intel PCH' }, { id: '1', name: 'USB-Audio - USB Camera' }]);
  const alsa = parseAlsaDevices('  2: [ 0- 0]: digital audio playback\n  3: [ 0- 0]: digital audio capture\n  4: [ 1- 0]: digital audio capture\n 33:        : timer\n', cards);
  t.same(alsa, [
    { id: 'hw:0,0', name: 'HDA-Intel - HDA Intel PCH', extra: '', media: 'audio' },
    { id: 'hw:1,0', name: 'USB-Audio - USB Camera', extra: '', media: 'audio' },
  ]);
  const v4l2 = parseV4l2Devices('UVC Camera (046d:0825) (usb-0000:00:14.0-1):\n\t/dev/video0\n\t/dev/video1\n\t/dev/media0\n\nbcm2835-codec-decode (platform:bcm2835-codec):\n\t/dev/video10\n');
  t.same(v4l2.map((d) => [d.id, d.name, d.extra]), [
    ['/dev/video0', 'UVC Camera (046d:0825)', 'usb-0000:00:14.0-1'],
    ['/dev/video1', 'UVC Camera (046d:0825)', 'usb-0000:00:14.0-1'],
    ['/dev/video10', 'bcm2835-codec-decode', 'platform:bcm2835-codec'],
  ]);
  t.equal(parseFramebuffer('mode "1920x1080"\n    geometry 1920 1080 1920 1080 32\n    timings 0 0 0 0 0 0 0\n    rgba 8/16,8/8,8/0,8/24\nendmode\n'), '1920x1080 bgra');
  t.equal(parseFramebuffer('    geometry 800 480 800 960 16\n    rgba 5/11,6/5,5/0,0/0\n'), '800x480 (800x960) rgb565le');
  const avf = parseAvfoundationDevices(`[AVFoundation indev @ 0x7f] AVFoundation video devices:
[AVFoundation indev @ 0x7f] [0] FaceTime HD Camera
[AVFoundation indev @ 0x7f] [1] Capture screen 0
[AVFoundation indev @ 0x7f] AVFoundation audio devices:
[AVFoundation indev @ 0x7f] [0] MacBook Pro Microphone
: Input/output error`);
  t.same(avf.map((d) => [d.id, d.name, d.media]), [['0', 'FaceTime HD Camera', 'video'], ['1', 'Capture screen 0', 'video'], ['0', 'MacBook Pro Microphone', 'audio']]);
  for (const parse of [(s: string) => parseAlsaDevices(s, parseAlsaCards(s)), parseV4l2Devices, parseAvfoundationDevices]) t.same(parse(''), []);
  t.equal(parseFramebuffer(''), '');
});
