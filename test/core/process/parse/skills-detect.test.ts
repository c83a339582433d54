import t from 'tap';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { detectSkills, detectSkillsWithErrors } from '../../../../core/process/parse/skills-detect.ts';

const FAKE = `#!/bin/sh
case "$1" in
  -version) echo 'ffmpeg version 4.4.1-datarhei Copyright (c) 2000-2021 the FFmpeg developers'; echo '  built with gcc 10'; echo '  configuration: --enable-gpl'; echo '  libavutil      56. 70.100 / 56. 70.100' ;;
  -filters) echo ' ... anullsrc          |->A       Null audio source, return empty audio frames.' ;;
  -hwaccels) printf 'Hardware acceleration methods:\\nvaapi\\n\\n' ;;
  -codecs) echo ' DEA.L. aac                  AAC (Advanced Audio Coding) (decoders: aac aac_fixed )' ;;
  -formats) echo ' DE flv             FLV (Flash Video)' ;;
  -devices) echo ' D  lavfi           Libavfilter virtual input device' ;;
  -protocols) printf 'Supported file protocols:\\nInput:\\n  rtmp\\nOutput:\\n  rtmp\\n  file\\n' ;;
esac
exit 0
`;

t.test('a fake binary: every listing is run and parsed, with an empty environment', async (t) => {
  const dir = t.testdir({});
  const bin = join(dir, 'ffmpeg');
  writeFileSync(bin, FAKE, { mode: 0o755 });
  const { skills, errors } = await detectSkillsWithErrors(bin);
  t.same(errors, []);
  t.same(skills, {
    ffmpeg: { version: '4.4.1', compiler: 'gcc 10', configuration: '--enable-gpl', libraries: [{ name: 'libavutil', compiled: '56. 70.100', linked: '56. 70.100' }] },
    filter: [{ id: 'anullsrc', name: 'Null audio source, return empty audio frames.' }],
    hwaccels: [{ id: 'vaapi', name: 'vaapi' }],
    codecs: { audio: [{ id: 'aac', name: 'AAC (Advanced Audio Coding)', encoders: ['aac'], decoders: ['aac', 'aac_fixed'] }], video: [], subtitle: [] },
    devices: { demuxers: [{ id: 'lavfi', name: 'Libavfilter virtual input device', devices: [] }], muxers: [] },
    formats: { demuxers: [{ id: 'flv', name: 'FLV (Flash Video)' }], muxers: [{ id: 'flv', name: 'FLV (Flash Video)' }] },
    protocols: { input: [{ id: 'rtmp', name: 'rtmp' }], output: [{ id: 'rtmp', name: 'rtmp' }, { id: 'file', name: 'file' }] },
  });
});

t.test('a missing binary gives empty skills and an error, never an exception', async (t) => {
  const noted: string[] = [];
  const skills = await detectSkills('/nonexistent/ffmpeg', { onError: (m) => noted.push(m) });
  t.equal(skills.ffmpeg.version, '');
  t.same(skills.filter, []);
  t.same(skills.codecs, { audio: [], video: [], subtitle: [] });
  t.equal(noted.length, 1);
  t.match(noted[0], /ENOENT/);
});

t.test('a binary that hangs is cut off by the timeout', async (t) => {
  const dir = t.testdir({});
  const bin = join(dir, 'ffmpeg');
  writeFileSync(bin, '#!/bin/sh\nexec /bin/sleep 10\n', { mode: 0o755 });
  const started = Date.now();
  const { skills, errors } = await detectSkillsWithErrors(bin, { timeoutMs: 200 });
  t.ok(Date.now() - started < 5000);
  t.equal(skills.ffmpeg.version, '');
  t.equal(errors.length, 1);
});

t.test('an unparsable version is reported', async (t) => {
  const dir = t.testdir({});
  const bin = join(dir, 'ffmpeg');
  writeFileSync(bin, "#!/bin/sh\necho 'ffmpeg version N-113180-g1c6ffde4a2'\n", { mode: 0o755 });
  const { skills, errors } = await detectSkillsWithErrors(bin);
  t.equal(skills.ffmpeg.version, '');
  t.match(errors, [/cannot parse the version/]);
});

t.test('the installed ffmpeg', { skip: !existsSync('/usr/bin/ffmpeg') && 'no /usr/bin/ffmpeg' }, async (t) => {
  const skills = await detectSkills('/usr/bin/ffmpeg');
  t.match(skills.ffmpeg.version, /^\d+\.\d+\.\d+$/);
  t.ok(skills.filter.some((f) => f.id === 'testsrc2'));
  t.ok(skills.codecs.video.some((c) => c.id === 'h264' && c.decoders?.includes('h264')));
  t.ok(skills.formats.muxers.some((f) => f.id === 'hls'));
  t.ok(skills.protocols.input.some((p) => p.id === 'file'));
});
