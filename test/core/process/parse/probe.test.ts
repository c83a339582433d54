import t from 'tap';
import { readFileSync } from 'node:fs';
import { Value } from '@sinclair/typebox/value';
import { parseProbe } from '../../../../core/process/parse/probe.ts';
import { ProbeSchema } from '../../../../core/process/parse/schemas.ts';

const fixture = (name: string) => readFileSync(new URL(`../../../fixtures/ffmpeg/${name}`, import.meta.url), 'utf8');

t.test('probe of two lavfi inputs (recorded)', async (t) => {
  const probe = parseProbe(fixture('probe-lavfi.stderr'));
  t.ok(Value.Check(ProbeSchema, probe));
  t.same(probe.streams, [
    {
      url: 'testsrc2=size=320x240:rate=25', format: 'lavfi', index: 0, stream: 0, language: 'und', type: 'video',
      codec: 'rawvideo', coder: '', bitrate_kbps: 0, duration_sec: 0, fps: 0, pix_fmt: 'yuv420p', width: 320,
      height: 240, sampling_hz: 0, layout: '', channels: 0,
    },
    {
      url: 'sine=frequency=440:sample_rate=44100', format: 'lavfi', index: 1, stream: 0, language: 'und',
      type: 'audio', codec: 'pcm_s16le', coder: '', bitrate_kbps: 705, duration_sec: 0, fps: 0, pix_fmt: '',
      width: 0, height: 0, sampling_hz: 44100, layout: 'mono', channels: 1,
    },
  ]);
  t.equal(probe.log.length, 18, 'every stderr line');
  t.equal(probe.log.at(-1), 'At least one output file must be specified');
});

t.test('probe of an mp4 file with video, audio and subtitles (recorded)', async (t) => {
  const probe = parseProbe(fixture('probe-mp4.stderr'));
  t.same(probe.streams.map((s) => [s.url, s.format, s.index, s.stream, s.language, s.type, s.codec, s.bitrate_kbps, s.duration_sec, s.fps, s.pix_fmt, s.width, s.height, s.sampling_hz, s.layout, s.channels]), [
    ['sample.mp4', 'mov,mp4,m4a,3gp,3g2,mj2', 0, 0, 'und', 'video', 'h264', 335, 2, 25, 'yuv420p', 320, 240, 0, '', 0],
    ['sample.mp4', 'mov,mp4,m4a,3gp,3g2,mj2', 0, 1, 'eng', 'audio', 'aac', 96, 2, 0, '', 0, 0, 44100, 'mono', 1],
    ['sample.mp4', 'mov,mp4,m4a,3gp,3g2,mj2', 0, 2, 'por', 'subtitle', 'mov_text', 0, 2, 0, '', 0, 0, 0, '', 0],
  ]);
});

t.test('the same streams as lines, with a level tag', async (t) => {
  const lines = fixture('probe-mp4.stderr').split('\n').map((l) => `[info] ${l}`);
  const probe = parseProbe(lines);
  t.equal(probe.streams.length, 3);
  t.equal(probe.streams[1]!.language, 'eng');
});

t.test("patched ffmpeg's JSON description wins; avstream lines are not log", async (t) => {
  const json = JSON.stringify([
    { url: 'rtmp://x/live', format: 'flv', index: 0, stream: 0, language: '', type: 'video', codec: 'h264', coder: 'h264', bitrate_kbps: 2000.5, duration_sec: 0, fps: 29.97, pix_fmt: 'yuv420p', width: 1920, height: 1080 },
  ]);
  const probe = parseProbe([
    "Input #0, flv, from 'rtmp://x/live':",
    '  Stream #0:0: Video: h264, yuv420p, 1920x1080, 30 fps',
    '  Stream #0:1: Audio: aac, 48000 Hz, stereo',
    `ffmpeg.inputs:${json}`,
    'avstream.progress:{"id":"x"}',
    '',
  ]);
  t.equal(probe.streams.length, 1);
  t.match(probe.streams[0], { url: 'rtmp://x/live', language: 'und', fps: 29.97, bitrate_kbps: 2000.5, sampling_hz: 0, layout: '', channels: 0 });
  t.equal(probe.log.length, 4);
  t.notOk(probe.log.some((l) => l.startsWith('avstream.progress:')));
  const broken = parseProbe(["Input #0, flv, from 'a':", '  Stream #0:0: Audio: aac, 48000 Hz, stereo', 'ffmpeg.inputs:[oops']);
  t.equal(broken.streams[0]!.type, 'audio', 'unreadable JSON falls back to the classic lines');
});

t.test('nothing to probe', async (t) => {
  t.same(parseProbe(fixture('error-missing-input.stderr')).streams, []);
  t.same(parseProbe(''), { streams: [], log: [] });
});
