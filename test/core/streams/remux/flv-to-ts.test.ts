import t from 'tap';
import { FlvToTs, TS_OFFSET, classifyFlv, type FlvTag } from '../../../../core/streams/remux/index.ts';
import { byKind, fixture, noFfprobe, probeFrames, probePackets, readFlv, tsPackets } from './helpers.ts';

function remux(tags: FlvTag[]): { ts: Buffer; perTag: Array<Buffer | undefined> } {
  const c = new FlvToTs();
  const perTag = tags.map((tag) => c.push(tag));
  return { ts: Buffer.concat(perTag.filter((b): b is Buffer => b !== undefined)), perTag };
}

for (const name of ['av.flv', 'audio.flv', 'mp3.flv']) {
  t.test(`${name}: every frame decodes, timestamps and keyframes kept`, { skip: noFfprobe }, async (t) => {
    const src = fixture(name);
    const { ts } = remux(readFlv(src));
    const want = byKind(probePackets(src, 'flv'));
    const got = byKind(probePackets(ts, 'mpegts'));
    for (const kind of ['video', 'audio'] as const) {
      t.equal(got[kind].length, want[kind].length, `${kind} packet count`);
      const bad = got[kind].filter((p, i) => Math.abs(p.pts - (want[kind][i].pts * 90 + TS_OFFSET)) > 90
        || Math.abs(p.dts - (want[kind][i].dts * 90 + TS_OFFSET)) > 90 || p.key !== want[kind][i].key);
      t.same(bad, [], `${kind}: PTS/DTS within 1 ms (90 kHz) and keyframe flags as the source`);
    }
    t.same(probeFrames(ts, 'mpegts'), probeFrames(src, 'flv'), 'as many frames decode as from the source');
  });
}

t.test('packets: whole, continuity per PID, PAT/PMT first and before each keyframe, PCR on video', async (t) => {
  const tags = readFlv(fixture('av.flv'));
  const { ts, perTag } = remux(tags);
  t.equal(ts.length % 188, 0);
  const packets = tsPackets(ts);
  t.equal(packets[0].pid, 0, 'PAT first');
  t.equal(packets[1].pid, 0x1000, 'PMT second');
  const last = new Map<number, number>();
  let breaks = 0;
  for (const p of packets) {
    const prev = last.get(p.pid);
    if (prev !== undefined && p.cc !== ((prev + 1) & 15)) breaks++;
    last.set(p.pid, p.cc);
  }
  t.equal(breaks, 0, 'continuity counters count up per PID');
  let keyframes = 0;
  tags.forEach((tag, i) => {
    const out = perTag[i];
    if (classifyFlv(tag) !== 'keyframe' || !out) return;
    keyframes++;
    const ps = tsPackets(out);
    t.ok(ps[0].pid === 0 && ps[1].pid === 0x1000 && ps[2].rai && ps[2].pcr, `keyframe at ${tag.timestamp} ms: PAT, PMT, then RAI + PCR`);
  });
  t.equal(keyframes, 2);
  t.ok(packets.filter((p) => p.pcr).every((p) => p.pid === 0x100), 'PCR only on the video PID');
  const media = (tag: FlvTag) => /frame/.test(classifyFlv(tag)) && !(tag.type === 9 && tag.body[1] === 2); // not the end of sequence
  t.same(tags.map((tag, i) => media(tag) === (perTag[i] !== undefined)).filter((ok) => !ok), [],
    'every frame yields packets; headers, metadata and the end of sequence none');
});

t.test('audio only: PCR on the audio PID, PAT/PMT at least every 100 ms', async (t) => {
  const tags = readFlv(fixture('audio.flv'));
  const { perTag } = remux(tags);
  let lastPsi = -1;
  let gaps = 0;
  tags.forEach((tag, i) => {
    const out = perTag[i];
    if (!out) return;
    const ps = tsPackets(out);
    if (ps[0].pid === 0) lastPsi = tag.timestamp;
    if (tag.timestamp - lastPsi > 100) gaps++;
    t.ok(ps.some((p) => p.pid === 0x101 && p.pcr), `PCR in the audio packet at ${tag.timestamp}`);
  });
  t.equal(gaps, 0);
});

t.test('unknown codecs and enhanced-RTMP video yield nothing', async (t) => {
  const c = new FlvToTs();
  t.equal(c.push({ type: 9, timestamp: 0, body: Buffer.from([0x90, 0x68, 0x76, 0x63, 0x31, 1, 2, 3]) }), undefined, 'hvc1 SequenceStart');
  t.equal(c.push({ type: 9, timestamp: 0, body: Buffer.from([0x12, 1, 0, 0, 0, 0, 0, 0, 1, 0x65]) }), undefined, 'Sorenson H.263');
  t.equal(c.push({ type: 8, timestamp: 0, body: Buffer.from([0x6f, 1, 2, 3]) }), undefined, 'Nellymoser');
  t.equal(c.push({ type: 18, timestamp: 0, body: Buffer.from([2, 0, 10]) }), undefined, 'metadata');
  t.equal(c.push({ type: 9, timestamp: 0, body: Buffer.from([0x17, 1, 0, 0, 0, 0, 0, 0, 1, 0x65]) }), undefined, 'H.264 frame before its header');
});
