import t from 'tap';
import { paramsMismatch, parseStreamLine, StreamParamsReader, type StreamParams } from '../../../../plugins/playout/relay/stream-params.ts';

// Recorded from Debian's ffmpeg 5.1 remuxing with `-c copy -f mpegts pipe:1` (metadata lines left out).
const TS_SOURCE = [
  "Input #0, mpegts, from 'tcp://127.0.0.1:4000?listen=1':",
  '  Duration: N/A, start: 1.400000, bitrate: N/A',
  '  Program 1 ',
  '  Stream #0:0[0x100]: Video: h264 (Constrained Baseline) ([27][0][0][0] / 0x001B), yuv420p(progressive), 320x240 [SAR 1:1 DAR 4:3], 25 fps, 25 tbr, 90k tbn',
  '  Stream #0:1[0x101]: Audio: aac (LC) ([15][0][0][0] / 0x000F), 48000 Hz, stereo, fltp, 130 kb/s',
  "Output #0, mpegts, to 'pipe:1':",
  '  Metadata:',
  '    encoder         : Lavf59.27.100',
  '  Stream #0:0: Video: h264 (Constrained Baseline) ([27][0][0][0] / 0x001B), yuv420p(progressive), 320x240 [SAR 1:1 DAR 4:3], q=2-31, 25 fps, 25 tbr, 90k tbn',
  '  Stream #0:1: Audio: aac (LC) ([15][0][0][0] / 0x000F), 48000 Hz, stereo, fltp, 130 kb/s',
  'Stream mapping:',
  '  Stream #0:0 -> #0:0 (copy)',
];
const FLV_SOURCE = [
  "Input #0, flv, from 'rtmp://127.0.0.1/live/cam':",
  '  Stream #0:0: Video: h264 (Constrained Baseline), yuv420p(progressive), 160x120 [SAR 1:1 DAR 4:3], 30 fps, 30 tbr, 1k tbn',
  '  Stream #0:1: Audio: aac (LC), 44100 Hz, mono, fltp, 69 kb/s',
  "Output #0, mpegts, to 'pipe:1':",
  '  Stream #0:0: Video: h264 (Constrained Baseline), yuv420p(progressive), 160x120 [SAR 1:1 DAR 4:3], q=2-31, 30 fps, 30 tbr, 90k tbn',
  '  Stream #0:1: Audio: aac (LC), 44100 Hz, mono, fltp, 69 kb/s',
  'Stream mapping:',
];
const HEVC_NO_FPS_OUT = [
  "Input #0, matroska,webm, from 'in.mkv':",
  '  Stream #0:0: Video: hevc (Main), yuv420p(tv, progressive), 160x120 [SAR 1:1 DAR 4:3], 10 fps, 10 tbr, 1k tbn',
  "Output #0, mpegts, to 'pipe:1':",
  '  Stream #0:0: Video: hevc (Main), yuv420p(tv, progressive), 160x120 [SAR 1:1 DAR 4:3], q=2-31, 90k tbn',
  'Stream mapping:',
];

function read(lines: string[]): StreamParams | null {
  const r = new StreamParamsReader();
  let got: StreamParams | null = null;
  for (const l of lines) got = r.push(l) ?? got;
  return got;
}

t.test('parameters of the output block, complete at the next unindented line', async (t) => {
  t.same(read(TS_SOURCE), {
    video: { codec: 'h264', profile: 'Constrained Baseline', pixFmt: 'yuv420p', width: 320, height: 240, fps: 25 },
    audio: { codec: 'aac', rate: 48000, layout: 'stereo' },
  });
  t.same(read(FLV_SOURCE), {
    video: { codec: 'h264', profile: 'Constrained Baseline', pixFmt: 'yuv420p', width: 160, height: 120, fps: 30 },
    audio: { codec: 'aac', rate: 44100, layout: 'mono' },
  });
  t.same(read(HEVC_NO_FPS_OUT), { video: { codec: 'hevc', profile: 'Main', pixFmt: 'yuv420p', width: 160, height: 120, fps: 10 } },
    'the frame rate missing on the output comes from the input');
  t.equal(read(TS_SOURCE.slice(0, -2)), null, 'not complete before the block ends');
  t.equal(parseStreamLine('  Stream #0:2: Data: none'), null);
});

t.test('a switch is refused with the first difference', async (t) => {
  const cur = read(TS_SOURCE)!;
  t.equal(paramsMismatch(cur, read(TS_SOURCE)!), null);
  const small = structuredClone(cur);
  small.video!.width = 160;
  small.video!.height = 120;
  t.equal(paramsMismatch(cur, small), 'video size 160x120 != 320x240');
  t.equal(paramsMismatch(cur, { video: cur.video }), 'audio stream missing');
  t.equal(paramsMismatch(cur, read(FLV_SOURCE)!), 'video size 160x120 != 320x240');
  t.equal(paramsMismatch(read(HEVC_NO_FPS_OUT)!, read(FLV_SOURCE)!), 'video codec h264 != hevc');
  const rate = structuredClone(cur);
  rate.audio!.rate = 44100;
  t.equal(paramsMismatch(cur, rate), 'audio rate 44100 != 48000');
});

t.test('source arguments: the user input options before -i, a short probe for RTMP unless they set one', async (t) => {
  const { sourceArgs } = await import('../../../../plugins/playout/relay/source.ts');
  const a = sourceArgs('rtmp://h/live/x', ['-rw_timeout', '5000000']);
  t.match(a.join(' '), /-analyzeduration 1000000 -rw_timeout 5000000 -i rtmp:\/\/h\/live\/x -map 0:v:0\? -map 0:a:0\? -c copy .*-f mpegts pipe:1$/);
  t.notOk(sourceArgs('rtmp://h/live/x', ['-probesize', '100000']).includes('1000000'), 'the user\'s probe options win');
  t.notOk(sourceArgs('srt://h:1', []).includes('-analyzeduration'), 'other protocols probe as ffmpeg likes');
});
