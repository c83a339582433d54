import t, { type Test } from 'tap';
import { FlvToTs, TsToFlv, classifyFlv, type FlvTag } from '../../../../core/streams/remux/index.ts';
import { byKind, fixture, noFfprobe, probeFrames, probePackets, readFlv, writeFlv } from './helpers.ts';

function flvToTs(tags: FlvTag[]): Buffer {
  const c = new FlvToTs();
  return Buffer.concat(tags.map((x) => c.push(x)).filter((b): b is Buffer => b !== undefined));
}

function tsToFlv(ts: Buffer): FlvTag[] {
  const c = new TsToFlv();
  return [...c.push(ts), ...c.flush()];
}

/** The frames of a track, timestamps relative to the first media tag's (headers are compared apart). */
function track(tags: FlvTag[], type: 8 | 9): Array<{ ts: number; cls: string; body: string }> {
  const media = tags.filter((x) => x.type === type && !(type === 9 && x.body[1] === 2) && !classifyFlv(x).endsWith('header'));
  const t0 = tags.filter((x) => x.type !== 18)[0].timestamp;
  return media.map((x) => ({ ts: (x.timestamp - t0) >>> 0, cls: classifyFlv(x), body: x.body.toString('base64') }));
}

/**
 * The rebuilt headers are prefixes of ffmpeg's: the AudioSpecificConfig without its SBR sync
 * extension, the AVC record without the High-profile chroma/bit-depth trailer.
 */
function headersMatch(t: Test, back: FlvTag[], src: FlvTag[]): void {
  for (const cls of ['audio-header', 'video-header']) {
    const a = back.filter((x) => classifyFlv(x) === cls);
    const b = src.filter((x) => classifyFlv(x) === cls);
    t.equal(a.length, b.length, `${cls} count`);
    if (a.length > 0) t.ok(b[0].body.subarray(0, a[0].body.length).equals(a[0].body), `${cls} as the source's`);
  }
}

for (const name of ['av.flv', 'audio.flv', 'mp3.flv']) {
  t.test(`${name} -> TS -> FLV gives the same tags`, async (t) => {
    const src = readFlv(fixture(name));
    const back = tsToFlv(flvToTs(src));
    for (const type of [8, 9] as const) t.same(track(back, type), track(src, type), `${type === 8 ? 'audio' : 'video'} frames: timestamps, classes, bodies`);
    headersMatch(t, back, src);
  });
}

t.test('round trip decodes as the source', { skip: noFfprobe }, async (t) => {
  const src = fixture('av.flv');
  const back = writeFlv(tsToFlv(flvToTs(readFlv(src))));
  t.same(probeFrames(back, 'flv'), probeFrames(src, 'flv'));
  const a = byKind(probePackets(src, 'flv'));
  const b = byKind(probePackets(back, 'flv'));
  t.same(b.video.map((p) => [p.pts, p.dts, p.key]), a.video.map((p) => [p.pts, p.dts, p.key]));
});

/** Source tags shifted so that their timestamps start at `start` ms (mod 2^32). */
function shifted(start: number): FlvTag[] {
  return readFlv(fixture('av.flv')).map((x) => ({ ...x, timestamp: (x.timestamp + start) % 4294967296 }));
}

t.test('the 32-bit FLV ms wraparound and the 33-bit PTS wraparound', async (t) => {
  const src = readFlv(fixture('av.flv'));
  const wrap33 = Math.ceil(8589934592 / 90) - 1000; // DTS * 90 (plus the offset) wraps 33 bits during the clip
  for (const start of [4294967296 - 1000, wrap33, 5 * wrap33]) {
    const back = tsToFlv(flvToTs(shifted(start)));
    for (const type of [8, 9] as const) t.same(track(back, type), track(src, type), `start ${start}: ${type === 8 ? 'audio' : 'video'} unchanged`);
  }
});
