import t from 'tap';
import { PreludeParser, channelsOfLayout, parseStreamLine } from '../../../../core/process/parse/prelude.ts';

// Stream descriptions in the spellings of several ffmpeg versions (4.0 with tabs and tbc, 5.1, 6.x).
const PRELUDE = `Input #0, lavfi, from 'testsrc=size=1280x720:rate=25':
  Duration: N/A, start: 0.000000, bitrate: N/A
    Stream #0:0: Video: rawvideo (RGB[24] / 0x18424752), rgb24, 1280x720 [SAR 1:1 DAR 16:9], 25 tbr, 25 tbn, 25 tbc
Input #1, mov,mp4,m4a,3gp,3g2,mj2, from 'movie.mp4':
  Metadata:
    major_brand     : isom
  Duration: 00:01:02.28, start: 0.000000, bitrate: 5895 kb/s
    Stream #1:0(eng): Video: h264 (Main) (avc1 / 0x31637661), yuvj420p(pc, bt709), 2560x1440 [SAR 1:1 DAR 16:9], 5894 kb/s, 23.98 fps, 25 tbr, 90k tbn, 50 tbc (default)
    Stream #1:1(por): Subtitle: subrip
    Stream #1:2[0x3](deu): Audio: eac3, 48000 Hz, 5.1(side), fltp, 640 kb/s
Input #2, mpegts, from 'srt://localhost:6000?mode=caller&streamid=#!:m=request,r=x':
  Duration: N/A, start: 71.786667, bitrate: N/A
\tProgram 1
\t\tMetadata:
\t\t\tservice_name    : Service01
\tStream #2:0[0x100]: Video: h264 (Main) ([27][0][0][0] / 0x001B), yuv420p(tv, smpte170m/bt709/bt709, progressive), 1920x1080 [SAR 1:1 DAR 16:9], 25 tbr, 90k tbn
\tStream #2:1[0x101]: Audio: aac (LC) ([15][0][0][0] / 0x000F), 48000 Hz, stereo, fltp, 162 kb/s
Stream mapping:
  Stream #0:0 (rawvideo) -> scale:default
  scale:default -> Stream #0:0 (libx264)
  Stream #2:1 -> #0:1 (copy)
  Stream #1:2 -> #1:0 (eac3 (native) -> aac (libfdk_aac))
Press [q] to stop, [?] for help
Output #1, adts, to 'out.aac':
  Stream #1:0: Audio: aac (LC), 48000 Hz, 5.1(side), fltp, 128 kb/s
Output #0, flv, to 'rtmp://example.com/live/key':
  Metadata:
    encoder         : Lavf58.12.100
    Stream #0:0: Video: h264 (libx264), yuv420p(progressive), 1280x720 [SAR 1:1 DAR 16:9], q=-1--1, 25 fps, 1k tbn, 25 tbc
    Stream #0:1: Audio: aac (LC), 48000 Hz, stereo, fltp, 162 kb/s`;

function parse(text: string, prefix = '') {
  const p = new PreludeParser();
  for (const line of text.split('\n')) p.feed(prefix + line);
  return p;
}

t.test('inputs: formats, indexes, languages, codecs, bitrates, durations, fps, pix_fmt, sizes, audio', async (t) => {
  const p = parse(PRELUDE);
  const inputs = p.inputs();
  t.equal(inputs.length, 6);
  const rows = inputs.map((s) => [s.index, s.stream, s.format, s.language, s.type, s.codec, s.bitrateKbps, s.durationSec, s.fps, s.pixFmt, s.width, s.height, s.samplingHz, s.layout, s.channels]);
  t.same(rows, [
    [0, 0, 'lavfi', 'und', 'video', 'rawvideo', 0, 0, 0, 'rgb24', 1280, 720, 0, '', 0],
    [1, 0, 'mov,mp4,m4a,3gp,3g2,mj2', 'eng', 'video', 'h264', 5894, 62.28, 23.98, 'yuvj420p', 2560, 1440, 0, '', 0],
    [1, 1, 'mov,mp4,m4a,3gp,3g2,mj2', 'por', 'subtitle', 'subrip', 0, 62.28, 0, '', 0, 0, 0, '', 0],
    [1, 2, 'mov,mp4,m4a,3gp,3g2,mj2', 'deu', 'audio', 'eac3', 640, 62.28, 0, '', 0, 0, 48000, '5.1(side)', 6],
    [2, 0, 'mpegts', 'und', 'video', 'h264', 0, 0, 0, 'yuv420p', 1920, 1080, 0, '', 0],
    [2, 1, 'mpegts', 'und', 'audio', 'aac', 162, 0, 0, '', 0, 0, 48000, 'stereo', 2],
  ]);
  t.equal(inputs[4]!.address, 'srt://localhost:6000?mode=caller&streamid=#!:m=request,r=x');
  t.same(inputs.map((s) => s.coder), ['rawvideo', '', '', 'eac3', '', 'copy'], 'decoders from the mapping');
});

t.test('outputs are put in ffmpeg order and get their encoders from the mapping', async (t) => {
  const p = parse(PRELUDE);
  t.equal(p.mappedOutputs, 3, 'graph inputs are not output streams');
  t.equal(p.outputCount, 3);
  t.ok(p.sawMapping);
  const outputs = p.outputs();
  t.same(outputs.map((s) => [s.index, s.stream, s.format, s.address, s.codec, s.coder]), [
    [0, 0, 'flv', 'rtmp://example.com/live/key', 'h264', 'libx264'],
    [0, 1, 'flv', 'rtmp://example.com/live/key', 'aac', 'copy'],
    [1, 0, 'adts', 'out.aac', 'aac', 'libfdk_aac'],
  ]);
  t.equal(outputs[0]!.fps, 25);
  t.equal(outputs[0]!.durationSec, 0);
});

t.test('the same prelude behind -loglevel level+info tags', async (t) => {
  const p = parse(PRELUDE, '[info] ');
  t.equal(p.inputs().length, 6);
  t.equal(p.outputs().length, 3);
  t.equal(p.mappedOutputs, 3);
});

t.test('a prelude without mapping (log level too low) and lines outside any block', async (t) => {
  const p = parse('  Stream #0:0: Video: h264, yuv420p, 10x10\nsomething else');
  t.equal(p.sawMapping, false);
  t.equal(p.inputs().length, 0, 'a stream line before any Input # header belongs to nothing');
});

t.test('stream line details', async (t) => {
  const s = parseStreamLine('  Stream #0:1[0x2](eng): Audio: aac (LC) (mp4a / 0x6134706D), 44100 Hz, mono, fltp, 96 kb/s (default)');
  t.match(s, { index: 0, stream: 1, language: 'eng', type: 'audio', codec: 'aac', samplingHz: 44100, layout: 'mono', channels: 1, bitrateKbps: 96 });
  t.equal(parseStreamLine('  Stream #0:0 -> #0:0 (copy)'), null, 'a mapping line is not a stream');
  t.equal(parseStreamLine('  Stream #0:2: Data: bin_data (priv / 0x76697270)')?.type, 'data');
  t.equal(parseStreamLine('  Stream #0:0(x): Video: h264, yuv420p, 2x2')?.language, 'und', 'only 3-letter codes are languages');
});

t.test('channels of layouts', async (t) => {
  const cases: [string, number][] = [['mono', 1], ['stereo', 2], ['5.1(side)', 6], ['7.1', 8], ['3 channels', 3], ['weird', 0]];
  for (const [layout, n] of cases) t.equal(channelsOfLayout(layout), n, layout);
});
