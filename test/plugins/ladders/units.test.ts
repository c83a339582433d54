import t from 'tap';
import { readFileSync } from 'node:fs';
import { isApiError } from '../../../sdk/index.ts';
import { parseCoders } from '../../../core/process/parse/skills.ts';
import { encoderFor, filterGraph, ladderProcess, ladderProcessId, streamOfProcess, videoArgs } from '../../../plugins/ladders/command.ts';
import { fitRungs, knownSettings, PRESETS, renditionsFor, resolveLadder, resolveRungs } from '../../../plugins/ladders/presets.ts';

/* The pure parts of the ladders plugin: presets and custom rungs resolved and checked, the ffmpeg arguments. */

function refusal(fn: () => unknown): { code: string; detail: string } {
  try {
    fn();
  } catch (err) {
    if (isApiError(err)) return { code: err.errorCode, detail: err.details.join('; ') };
    throw err;
  }
  throw new Error('not refused');
}

const OPTS = { encoder: 'auto', preset: 'veryfast', idleSeconds: 30 };

t.test('presets and custom rungs resolve top first', async (t) => {
  const rungs = resolveRungs(['audio', '360p', { name: 'top', height: 1080, video_kbps: 6000, fps: 50, profile: 'high' }, 'source']);
  t.same(rungs.map((r) => r.name), ['source', 'top', '360p', 'audio'], 'copy, then by height, audio only last');
  t.same(rungs[1], { name: 'top', height: 1080, video_kbps: 6000, audio_kbps: 128, profile: 'high', copy: false, fps: 50 }, 'defaults filled');
  t.same(rungs[2], PRESETS['360p'], 'a preset by name');
  t.same(resolveRungs([{ name: 'voice', audio_kbps: 48 }])[0], { name: 'voice', height: 0, video_kbps: 0, audio_kbps: 48, profile: 'main', copy: false }, 'audio only');
  const r = renditionsFor(resolveLadder('x', { stream: 'live/cam', rungs: ['720p', 'audio', 'source'] }, 'api'), 'live/cam');
  t.same(r, [
    { name: 'live/cam/source', rung: 'source', videoBitrate: 0, audioBitrate: 128_000, copy: true },
    { name: 'live/cam/720p', rung: '720p', videoBitrate: 2_800_000, audioBitrate: 128_000, copy: false, height: 720 },
    { name: 'live/cam/audio', rung: 'audio', videoBitrate: 0, audioBitrate: 128_000, copy: false },
  ], 'renditions in bits per second, top first');
});

t.test('bad rungs and ladders are refused naming the field', async (t) => {
  const cases: [unknown, string, RegExp][] = [
    [[], 'LADDERS_INVALID', /^rungs: 1 to 8/],
    [Array(9).fill('360p'), 'LADDERS_INVALID', /^rungs: 1 to 8/],
    [['999p'], 'LADDERS_UNKNOWN_PRESET', /^rungs\[0\]: no preset '999p'/],
    [['360p', '360p'], 'LADDERS_INVALID', /two rungs named '360p'/],
    [['360p', { name: 'BAD name', height: 100, video_kbps: 100 }], 'LADDERS_INVALID', /^rungs\[1\]\.name/],
    [[{ name: 'a', height: 8, video_kbps: 100 }], 'LADDERS_INVALID', /^rungs\[0\]\.height: an integer from 16 to 4320/],
    [[{ name: 'a', height: 100 }], 'LADDERS_INVALID', /^rungs\[0\]\.video_kbps: needed/],
    [[{ name: 'a', height: 100, video_kbps: 10 }], 'LADDERS_INVALID', /^rungs\[0\]\.video_kbps/],
    [[{ name: 'a', height: 100, video_kbps: 100, fps: 0 }], 'LADDERS_INVALID', /^rungs\[0\]\.fps/],
    [[{ name: 'a', height: 100, video_kbps: 100, profile: 'high10' }], 'LADDERS_INVALID', /^rungs\[0\]\.profile/],
    [[{ name: 'a', audio_kbps: 0 }], 'LADDERS_INVALID', /^rungs\[0\]: a rung needs/],
    [['source', { name: 'b', copy: true }], 'LADDERS_INVALID', /one copy rung/],
    [[42], 'LADDERS_INVALID', /^rungs\[0\]: a preset name or a rung object/],
  ];
  for (const [rungs, code, detail] of cases) {
    const r = refusal(() => resolveRungs(rungs as unknown[]));
    t.equal(r.code, code, JSON.stringify(rungs).slice(0, 60));
    t.match(r.detail, detail);
  }
  t.match(refusal(() => resolveLadder('x', { rungs: ['360p'] }, 'api')).detail, /^stream: give either/);
  t.match(refusal(() => resolveLadder('x', { stream: 'a', pattern: 'b', rungs: ['360p'] }, 'api')).detail, /^stream: give either/);
  t.match(refusal(() => resolveLadder('x', { stream: 'live/../x', rungs: ['360p'] }, 'api')).detail, /^stream: no whitespace/);
  t.match(refusal(() => resolveLadder('x', { pattern: 'live/ *', rungs: ['360p'] }, 'api')).detail, /^pattern: no whitespace/);
  t.match(refusal(() => resolveLadder('x', { stream: 'a', rungs: ['360p'], gop_seconds: 0.1 }, 'api')).detail, /^gop_seconds/);
  t.equal(resolveLadder('x', { stream: '/live/cam', rungs: ['360p'] }, 'api').stream, 'live/cam', 'a leading / is dropped');
  t.same(knownSettings({ stream: 'a', rungs: ['360p', { name: 'b', height: 100, video_kbps: 100, extra: 1 } as never], junk: 2 } as never),
    { stream: 'a', rungs: ['360p', { name: 'b', height: 100, video_kbps: 100 }] }, 'unknown fields are not stored');
});

t.test('the process: one input, one filter graph, one flv output per rung', async (t) => {
  const ladder = resolveLadder('cam', { stream: 'live/cam', rungs: ['source', '720p', { name: 'small', height: 180, video_kbps: 150, fps: 15 }, 'audio'], gop_seconds: 1.5 }, 'api');
  const p = ladderProcess(ladder, 'live/cam', OPTS);
  t.equal(p.id, 'ladder:live_cam');
  t.equal(p.reference, 'ladders');
  t.same(p.input, [{ id: 'in', address: '{rtmp,name=live/cam}', options: [] }]);
  t.same(p.output.map((o) => o.address), ['{rtmp,name=live/cam/source}', '{rtmp,name=live/cam/720p}', '{rtmp,name=live/cam/small}', '{rtmp,name=live/cam/audio}']);
  t.same(p.options, ['-filter_complex', "[0:v:0]split=2[s0][s1];[s0]scale=w=-2:h='trunc(min(720,ih)/2)*2'[v0];[s1]scale=w=-2:h='trunc(min(180,ih)/2)*2'[v1]"]);
  t.match(p, { autostart: true, reconnect: true, ondemand: { enable: true, idle_seconds: 30 } }, 'on demand, the section\'s idle time');
  const [copy, hd, small, audio] = p.output.map((o) => o.options.join(' '));
  t.match(copy, /^-map 0:v:0 -map 0:a:0\? -c:a aac -b:a 128k -c:v copy .*-f flv$/);
  t.match(hd, /-map \[v0\] .*-c:v libx264 -preset veryfast -profile:v main .*-b:v 2800k -maxrate 2800k -bufsize 5600k -bf 0 -g 180 -sc_threshold 0 -force_key_frames expr:gte\(t,n_forced\*1\.5\) -forced-idr 1/);
  t.match(small, /-map \[v1\] .*-r 15 -bf 0 -g 46 /);
  t.match(audio, /^-map 0:a:0 -vn -c:a aac -b:a 128k /);
  t.equal(filterGraph([]), undefined, 'no graph without an encoded rung');
  t.equal(filterGraph([PRESETS['240p']!]), "[0:v:0]scale=w=-2:h='trunc(min(240,ih)/2)*2'[v0]", 'one rung, no split');
  t.match(videoArgs(PRESETS['240p']!, 0, 2, { ...OPTS, encoder: 'libx264', preset: 'ultrafast' }).join(' '), /-preset ultrafast -profile:v baseline/);
  t.same(ladderProcess({ ...ladder, idle_seconds: 5, limits: { cpu_usage: 50, memory_mbytes: 256, waitfor_seconds: 5 } }, 'live/cam', OPTS).limits,
    { cpu_usage: 50, memory_mbytes: 256, waitfor_seconds: 5 }, 'the ladder\'s limits are the process\'s');
});

t.test('the rungs a source can feed', async (t) => {
  const rungs = resolveRungs(['source', '720p', 'audio', { name: 'voice', audio_kbps: 32 }, { name: 'mute', height: 180, video_kbps: 150, audio_kbps: 0 }]);
  const names = (m?: { video: boolean; audio: boolean }) => fitRungs(rungs, m).map((r) => r.name);
  t.same(names(undefined), ['source', '720p', 'mute', 'audio', 'voice'], 'not known yet: every rung');
  t.same(names({ video: true, audio: true }), ['source', '720p', 'mute', 'audio', 'voice'], 'both: every rung');
  t.same(names({ video: true, audio: false }), ['source', '720p', 'mute'], 'no audio: no audio-only rung (a video rung\'s audio is optional)');
  t.same(names({ video: false, audio: true }), ['audio', 'voice'], 'no video: no video or copy rung');
  t.same(names({ video: false, audio: false }), [], 'neither: none');
  const ladder = resolveLadder('cam', { stream: 'live/cam', rungs: ['240p'] }, 'api');
  const input = (m?: { video: boolean; audio: boolean }) => ladderProcess(ladder, 'live/cam', OPTS, m).input[0]!.options;
  t.same(input({ video: true, audio: false }), ['-analyzeduration', '500000'], 'one kind: ffmpeg does not wait 5 s for the other');
  t.same(input({ video: false, audio: true }), ['-analyzeduration', '500000']);
  t.same(input({ video: true, audio: true }), [], 'both: as ffmpeg probes');
  t.same(input(undefined), [], 'not known: as ffmpeg probes');
});

t.test('process ids: one path segment, never shared by two streams', async (t) => {
  t.equal(ladderProcessId('cam'), 'ladder:cam');
  t.equal(ladderProcessId('live/a/b'), 'ladder:live_a_b');
  t.match(ladderProcessId('live_a/b'), /^ladder:live_a_b~[0-9a-f]{8}$/);
  t.not(ladderProcessId('live_a/b'), ladderProcessId('live/a/b'));
  t.equal(streamOfProcess('{rtmp,name=live/cam}'), 'live/cam');
  t.equal(streamOfProcess('rtmp://x/y'), undefined);
});

t.test('the encoder: auto takes a hardware one the skills list whose device is present (recorded skills)', async (t) => {
  const skills = { codecs: parseCoders('', readFileSync(new URL('../../fixtures/ffmpeg/encoders.txt', import.meta.url), 'utf8')) };
  t.same(encoderFor('auto', skills, new Set(['/dev/nvidia0'])), { encoder: 'h264_nvenc' }, 'an NVIDIA GPU: NVENC');
  t.same(encoderFor('auto', skills, new Set(['/dev/dri/renderD128'])), { encoder: 'h264_qsv' }, 'a render node: Quick Sync before VAAPI');
  t.same(encoderFor('auto', skills, new Set()), { encoder: 'libx264' }, 'no device (CI): libx264');
  t.same(encoderFor('auto', undefined, new Set(['/dev/nvidia0'])), { encoder: 'libx264' }, 'no skills: libx264');
  t.match(encoderFor('h264_vaapi', skills, new Set()), { encoder: 'h264_vaapi', problem: /needs \/dev\/dri\/renderD128/ }, 'a named one the machine lacks is kept, with why');
  t.same(encoderFor('libx264', skills, new Set()), { encoder: 'libx264' });
});

t.test('each hardware encoder gets its own options; keyframes stay forced and aligned', async (t) => {
  const ladder = resolveLadder('cam', { stream: 'live/cam', rungs: ['480p', '240p'] }, 'api');
  const args = (encoder: string) => ladderProcess(ladder, 'live/cam', { ...OPTS, encoder });
  const key = /-bf 0 -g 240 .*-force_key_frames expr:gte\(t,n_forced\*2\)/;
  const nvenc = args('h264_nvenc');
  t.match(nvenc.output[0]!.options.join(' '), /-c:v h264_nvenc -preset p4 -tune ll -rc cbr -profile:v main -b:v 1400k -maxrate 1400k -bufsize 2800k -bf 0 -g 240 -no-scenecut 1 -force_key_frames expr:gte\(t,n_forced\*2\) -forced-idr 1/);
  t.notMatch(nvenc.output[0]!.options.join(' '), /-sc_threshold|-pix_fmt/, 'no x264-only option');
  const qsv = args('h264_qsv').output[1]!.options.join(' ');
  t.match(qsv, /-c:v h264_qsv -preset veryfast -profile:v baseline .*-look_ahead 0/);
  t.match(qsv, key);
  t.match(qsv, /-forced_idr 1/);
  const vaapi = args('h264_vaapi');
  t.same(vaapi.options.slice(0, 2), ['-vaapi_device', '/dev/dri/renderD128'], 'VAAPI: its device opened once for the graph');
  t.match(vaapi.options[3], /scale=[^;]*,format=nv12,hwupload\[v0\].*,format=nv12,hwupload\[v1\]/, 'every scaled picture uploaded');
  t.match(vaapi.output[1]!.options.join(' '), /-c:v h264_vaapi -profile:v constrained_baseline /);
  t.match(vaapi.output[1]!.options.join(' '), key);
  t.equal(args('libx264').options[0], '-filter_complex', 'software: no device');
});
