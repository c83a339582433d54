import t from 'tap';
import { FlvToTs, TsToFlv, classifyFlv, type FlvTag } from '../../../../core/streams/remux/index.ts';
import { HOLD_TAGS } from '../../../../sdk/toolkit.ts';
import { byKind, chunked, fixture, noFfprobe, probeFrames, probePackets, readFlv, writeFlv } from './helpers.ts';

function remux(ts: Buffer, size = ts.length): FlvTag[] {
  const c = new TsToFlv();
  return [...chunked(ts, size, (b) => c.push(b)), ...c.flush()];
}

for (const name of ['av.mpegts', 'audio.mpegts']) {
  t.test(`${name}: every frame decodes, timestamps and keyframes kept`, { skip: noFfprobe }, async (t) => {
    const src = fixture(name);
    const flv = writeFlv(remux(src));
    const want = byKind(probePackets(src, 'mpegts'));
    const got = byKind(probePackets(flv, 'flv'));
    const first = Math.min(...[...want.video, ...want.audio].slice(0, 4).map((p) => p.dts));
    for (const kind of ['video', 'audio'] as const) {
      const w = [...want[kind]].sort((a, b) => a.dts - b.dts);
      t.equal(got[kind].length, w.length, `${kind} packet count`);
      const bad = got[kind].filter((p, i) => Math.abs(p.pts - (w[i].pts - first) / 90) > 1
        || Math.abs(p.dts - (w[i].dts - first) / 90) > 1 || p.key !== w[i].key);
      t.same(bad, [], `${kind}: PTS/DTS within 1 ms of the source's from its first DTS, keyframe flags as the source`);
    }
    t.same(probeFrames(flv, 'flv'), probeFrames(src, 'mpegts'), 'as many frames decode as from the source');
  });
}

t.test('headers first, tags in decode order per track, classes', async (t) => {
  const tags = remux(fixture('av.mpegts'));
  const video = tags.filter((x) => x.type === 9);
  const audio = tags.filter((x) => x.type === 8);
  t.equal(classifyFlv(video[0]), 'video-header');
  t.equal(classifyFlv(video[1]), 'keyframe');
  t.equal(classifyFlv(audio[0]), 'audio-header');
  t.same(audio[0].body, Buffer.from([0xaf, 0, 0x11, 0x88]), 'AudioSpecificConfig: AAC LC, 48 kHz, mono');
  t.equal(video.filter((x) => classifyFlv(x) === 'video-header').length, 1, 'one video header while SPS/PPS stay');
  t.equal(video.filter((x) => classifyFlv(x) === 'keyframe').length, 2);
  for (const track of [video, audio]) t.ok(track.every((x, i) => i === 0 || x.timestamp >= track[i - 1].timestamp), 'never backwards');
  const steps = audio.slice(2).map((x, i) => x.timestamp - audio[i + 1].timestamp);
  t.ok(steps.every((d) => d === 21 || d === 22), 'AAC frames 1024 samples (21.3 ms) apart, several per PES');
});

t.test('1-byte, 7-byte and 1316-byte chunks give the same tags', async (t) => {
  for (const name of ['av.mpegts', 'audio.mpegts']) {
    const src = fixture(name);
    const whole = writeFlv(remux(src));
    for (const size of [1, 7, 1316]) t.ok(writeFlv(remux(src, size)).equals(whole), `${name} in ${size}-byte chunks`);
  }
});

t.test('a new video header when SPS/PPS change', async (t) => {
  const tags = readFlv(fixture('av.flv'));
  const header = tags.find((x) => classifyFlv(x) === 'video-header')!;
  const changed = Buffer.from(header.body);
  changed[8] ^= 0x01; // the level in the record and in the SPS itself (profile_idc, constraint flags, level_idc)
  changed[16] ^= 0x01;
  const second = tags.map((x) => ({ ...x, timestamp: x.timestamp + 3000, body: x === header ? changed : x.body }));
  const c = new FlvToTs();
  const ts = Buffer.concat([...tags, ...second].map((x) => c.push(x)).filter((b): b is Buffer => b !== undefined));
  const out = remux(ts).filter((x) => classifyFlv(x) === 'video-header');
  t.equal(out.length, 2);
  t.not(out[0].body[8], out[1].body[8], 'the second record carries the new SPS');
  t.ok(out[1].timestamp >= 3000);
});

/** The 188-byte packets of `ts` whose PID is `pid`. */
function packetsOf(ts: Buffer, pid: (p: number) => boolean): Buffer[] {
  const out: Buffer[] = [];
  for (let o = 0; o + 188 <= ts.length; o += 188) if (pid(((ts[o + 1]! & 0x1f) << 8) | ts[o + 2]!)) out.push(ts.subarray(o, o + 188));
  return out;
}

t.test('video is the first track: audio waits for the video header, from the start and from mid-GOP', async (t) => {
  const src = fixture('av.mpegts');
  // the first tag is the video header, the first audio tag is the audio header
  const first = (tags: FlvTag[]) => [classifyFlv(tags[0]!), classifyFlv(tags.find((x) => x.type === 8)!)];
  t.same(first(remux(src)), ['video-header', 'audio-header'], 'from the start: the video header first');
  // a converter made for a late reader: the cached PAT/PMT, then the stream from the middle of a GOP
  // (audio PES complete long before the next keyframe brings SPS/PPS)
  const psi = packetsOf(src, (pid) => pid === 0 || pid === 0x1000).slice(0, 2);
  const tail = src.subarray(Math.floor(src.length / 188 * 0.3) * 188);
  const tags = remux(Buffer.concat([...psi, tail]));
  t.same(first(tags), ['video-header', 'audio-header'], 'mid-GOP: the video header first');
  const audio = tags.filter((x) => x.type === 8);
  t.ok(audio.length > 10, 'the audio held meanwhile is kept, not dropped');
  t.ok(audio.every((x, i) => i === 0 || x.timestamp >= audio[i - 1]!.timestamp), 'in its own order');
});

t.test('audio-only programs are not held; holding gives up after HOLD_TAGS', async (t) => {
  const tags = remux(fixture('audio.mpegts'));
  t.equal(classifyFlv(tags[0]!), 'audio-header', 'no video in the PMT: audio goes out at once');
  // the video PID filtered out of an audio+video stream: its PMT promises video that never comes
  const src = fixture('av.mpegts');
  const noVideo = Buffer.concat(packetsOf(src, (pid) => pid !== 0x100));
  const c = new TsToFlv();
  t.same(c.push(noVideo), [], 'held while the video header may still come');
  t.ok(c.flush().length > 10, 'the end of the input lets the held audio go');
  const d = new TsToFlv();
  const out: FlvTag[] = [];
  for (let i = 0; i < 20 && out.length === 0; i++) out.push(...d.push(noVideo));
  t.ok(out.length >= HOLD_TAGS && out.every((x) => x.type === 8), `at ${HOLD_TAGS} tags the held audio goes out`);
  t.ok(d.push(noVideo).length > 10, 'and from then on audio is not held');
});
