import t from 'tap';
import { bitrates, renderMultivariant, reportOf, variantOf } from '../../../plugins/llhls/multivariant.ts';
import { Rendition } from '../../../plugins/llhls/playlist.ts';
import type { Fmp4Track } from '../../../plugins/llhls/fmp4.ts';

/* The multivariant playlist and the rendition reports (RFC 8216bis 4.4.6, 4.4.5.4), pure. */

const tracks = [
  { kind: 'video', id: 1, timescale: 90000, config: Buffer.alloc(4), codec: 'avc1.64001f', width: 1280, height: 720 },
  { kind: 'audio', id: 2, timescale: 48000, config: Buffer.alloc(2), codec: 'mp4a.40.2', channels: 2, sampleRate: 48000 },
] as Fmp4Track[];

function rendition(): Rendition {
  const r = new Rendition({ targetDuration: 2, partTarget: 0.5, window: 10, initUri: 'init.mp4' });
  for (let m = 0; m < 2; m++) {
    for (let i = 0; i < 4; i++) r.addPart({ duration: 0.5, uri: `${m}.${i}.m4s`, independent: i === 0 });
    r.closeSegment({ uri: `${m}.m4s` });
  }
  return r;
}

t.test('bit rates: the peak and the average of the segments held', async (t) => {
  const r = rendition();
  const sizes: Record<string, number> = { '0.m4s': 100_000, '1.m4s': 50_000 };
  t.same(bitrates(r, (u) => sizes[u]), { peak: 400_000, average: 300_000 });
  t.equal(bitrates(r, () => undefined), undefined, 'nothing measured');
});

t.test('a variant: codecs and size from the tracks, rates raised to the nominal one', async (t) => {
  t.same(variantOf('hi/index.m3u8', tracks, { peak: 900_000, average: 700_000 }, { bitrate: 1_000_000, frameRate: 25 }), {
    uri: 'hi/index.m3u8', bandwidth: 1_100_000, averageBandwidth: 700_000, codecs: ['avc1.64001f', 'mp4a.40.2'], width: 1280, height: 720, frameRate: 25,
  });
  t.match(variantOf('a', tracks, { peak: 2_000_000, average: 1_500_000 }), { bandwidth: 2_000_000, averageBandwidth: 1_500_000 }, 'measured above the nominal');
  t.equal(variantOf('a', [], { peak: 1, average: 1 }), undefined, 'no tracks yet');
  t.equal(variantOf('a', tracks, undefined), undefined, 'nothing measured and nothing nominal');
  const audio = variantOf('audio/index.m3u8', [tracks[1]!], undefined, { bitrate: 64_000 })!;
  t.same(audio.codecs, ['mp4a.40.2']);
  t.equal(audio.width, undefined, 'an audio-only variant has no resolution');
});

t.test('the multivariant text', async (t) => {
  const text = renderMultivariant([
    { uri: 'hi/index.m3u8', bandwidth: 1_100_000, averageBandwidth: 700_000, codecs: ['avc1.64001f', 'mp4a.40.2'], width: 1280, height: 720, frameRate: 25 },
    { uri: 'audio/index.m3u8?token=a%26b', bandwidth: 70_000, averageBandwidth: 64_000, codecs: ['mp4a.40.2'] },
  ]);
  t.equal(text, [
    '#EXTM3U', '#EXT-X-VERSION:6', '#EXT-X-INDEPENDENT-SEGMENTS',
    '#EXT-X-STREAM-INF:BANDWIDTH=1100000,AVERAGE-BANDWIDTH=700000,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720,FRAME-RATE=25.000',
    'hi/index.m3u8',
    '#EXT-X-STREAM-INF:BANDWIDTH=70000,AVERAGE-BANDWIDTH=64000,CODECS="mp4a.40.2"',
    'audio/index.m3u8?token=a%26b', '',
  ].join('\n'));
});

t.test('a rendition report names the last segment and its last part', async (t) => {
  const r = rendition();
  t.equal(reportOf('../lo/index.m3u8', r), '#EXT-X-RENDITION-REPORT:URI="../lo/index.m3u8",LAST-MSN=1,LAST-PART=3', 'no part of the open segment yet');
  r.addPart({ duration: 0.5, uri: '2.0.m4s', independent: true });
  t.equal(reportOf('x', r), '#EXT-X-RENDITION-REPORT:URI="x",LAST-MSN=2,LAST-PART=0', 'the part being written counts');
  t.equal(reportOf('x', new Rendition({ targetDuration: 2, partTarget: 0.5, window: 3, initUri: 'i' })), undefined, 'nothing yet');
  r.end();
  t.equal(reportOf('x', r), undefined, 'an ended rendition is not reported');
});
