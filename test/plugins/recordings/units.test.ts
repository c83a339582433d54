import t from 'tap';
import { Segmenter, type CutSegment } from '../../../plugins/recordings/segmenter.ts';
import { SegmentIndex, type Segment } from '../../../plugins/recordings/segments.ts';
import { scanSegment, tsCut } from '../../../plugins/recordings/cut.ts';
import { parseTime } from '../../../plugins/recordings/routes.ts';
import { segmentPath } from '../../../plugins/recordings/recorder.ts';
import { mapFs, probe, testTs } from './helpers.ts';

/** Feeds `ts` to a segmenter in chunks of 7 packets; the segments cut. */
function cut(ts: Buffer, segmentMs: number, now: () => number, maxBytes = 64e6, seg?: Segmenter): CutSegment[] {
  const out: CutSegment[] = [];
  const s = seg ?? new Segmenter({ segmentMs, maxBytes, now, onSegment: (x) => out.push(x) });
  for (let o = 0; o < ts.length; o += 188 * 7) s.push(ts.subarray(o, Math.min(ts.length, o + 188 * 7)));
  s.end();
  return out;
}

t.test('segments start at a keyframe with PAT/PMT in front, last at least segment_seconds, and touch', async (t) => {
  const ts = await testTs(t, 12);
  const segs = cut(ts, 4000, () => 1_700_000_000_000);
  t.equal(segs.length, 3, 'three segments of 12 s');
  for (const [i, s] of segs.entries()) {
    const buf = Buffer.concat(s.chunks);
    t.equal(buf.length, s.bytes, 'bytes counted');
    t.equal(buf.length % 188, 0, 'whole packets');
    const { head, frames } = scanSegment(buf, s.start);
    t.equal(head.length, 2, 'PAT and PMT first');
    t.ok(frames[0]!.key, 'the first frame is a keyframe');
    if (i < segs.length - 1) t.ok(s.duration >= 4000, `segment ${i} lasts ${s.duration} ms`);
    if (i > 0) t.equal(s.start, segs[i - 1]!.start + segs[i - 1]!.duration, 'it starts where the previous ended');
  }
  t.equal(segs[0]!.start, 1_700_000_000_000, 'the span starts at the wall clock of its first keyframe');
  const total = segs.reduce((a, s) => a + s.duration, 0);
  t.ok(Math.abs(total - 12_000) <= 200, `durations add up to the source (${total} ms)`);
  t.ok((await probe(Buffer.concat(segs[1]!.chunks), 'mpegts')).firstKey, 'a segment alone decodes from a keyframe');
});

t.test('a source drop ends a span; the next publish starts a new one; a too large segment is closed', async (t) => {
  const ts = await testTs(t, 6);
  let now = 1_000_000;
  const out: CutSegment[] = [];
  const seg = new Segmenter({ segmentMs: 2000, maxBytes: 64e6, now: () => now, onSegment: (x) => out.push(x) });
  cut(ts, 0, () => now, 0, seg);
  now += 20_000;
  cut(ts, 0, () => now, 0, seg);
  const index = new SegmentIndex(out.map((s) => ({ start: s.start, duration: s.duration, bytes: s.bytes, file: `/${s.start}.ts` })));
  const spans = index.spans();
  t.equal(spans.length, 2, 'two spans');
  t.ok(Math.abs(spans[0]!.duration - 6000) <= 200 && Math.abs(spans[1]!.duration - 6000) <= 200, 'of 6 s each');
  t.equal(spans[1]!.start, 1_020_000, 'the second at the new wall clock');

  const skips: string[] = [];
  const small: CutSegment[] = [];
  const s2 = new Segmenter({ segmentMs: 4000, maxBytes: 20_000, now: () => 0, onSegment: (x) => small.push(x), onSkip: (r) => skips.push(r) });
  cut(ts, 0, () => 0, 0, s2);
  t.ok(skips.length > 0, 'skips reported');
  t.ok(small.every((s) => s.bytes <= 20_000), 'no segment beyond the limit');
});

t.test('index: spans join within 1 s, covering stays in one span, retention by age, bytes and count', async (t) => {
  const seg = (start: number, duration: number, bytes = 100): Segment => ({ start, duration, bytes, file: `/r/${start}.ts` });
  const idx = new SegmentIndex([seg(8000, 4000), seg(0, 4000), seg(4500, 3500), seg(20_000, 4000)]);
  t.same(idx.spans(), [{ start: 0, duration: 12_000 }, { start: 20_000, duration: 4000 }], 'a 0.5 s gap joins, 8 s splits');
  t.same(idx.spans(13_000, 30_000), [{ start: 20_000, duration: 4000 }], 'spans of a range');
  t.same(idx.covering(5000, 5000).map((s) => s.start), [4500, 8000], 'the segments of a cut');
  t.same(idx.covering(6000, 60_000).map((s) => s.start), [4500, 8000], 'a cut stops at the gap');
  t.same(idx.covering(14_000, 2000).map((s) => s.start), [], 'nothing when the range is in a gap');
  t.same(idx.covering(14_000, 7000).map((s) => s.start), [20_000], 'the next span when it starts in the range');
  t.same(idx.expired(30_000, 18_000, 0, 0).map((s) => s.start), [0, 4500], 'by age: ended before now - max_age');
  t.same(idx.expired(30_000, 0, 250, 0).map((s) => s.start), [0, 4500], 'by bytes: oldest first');
  t.same(idx.expired(30_000, 0, 0, 1).map((s) => s.start), [0, 4500, 8000], 'by count');
  idx.remove(idx.expired(30_000, 0, 250, 0));
  t.equal(idx.bytes, 200, 'bytes follow');
  idx.add(seg(24_000, 4000));
  t.same(idx.list.map((s) => s.start), [8000, 20_000, 24_000], 'added in order');
  t.equal(segmentPath({ name: 'cam', prefix: '/rec', stream: 's', filesystem: 'disk', segment_seconds: 4, retention: { max_age_seconds: 0, max_bytes: 0 } }, 1_700_000_000_000),
    '/rec/cam/2023-11-14/1700000000000.ts', 'segment path');
});

t.test('a TS cut starts at the keyframe at or before start and decodes', async (t) => {
  const ts = await testTs(t, 12);
  const fs = mapFs();
  const idx = new SegmentIndex([]);
  for (const s of cut(ts, 4000, () => 0)) {
    const file = `/r/${s.start}.ts`;
    await fs.writeFile(file, Buffer.concat(s.chunks));
    idx.add({ start: s.start, duration: s.duration, bytes: s.bytes, file });
  }
  const start = 5450;
  const c = await tsCut(fs, idx.covering(start, 4000), start, start + 4000);
  t.ok(c, 'a cut');
  t.ok(c!.start <= start && c!.start > start - 1000, `it starts within one GOP before (${c!.start})`);
  const parts: Buffer[] = [];
  for await (const b of c!.body) parts.push(b);
  const p = await probe(Buffer.concat(parts), 'mpegts');
  t.ok(p.firstKey, 'the first frame is a keyframe');
  t.ok(Math.abs(p.duration - (start + 4000 - c!.start) / 1000) <= 0.3, `it lasts to the end asked (${p.duration} s)`);
});

t.test('times: RFC 3339, unix seconds and milliseconds', async (t) => {
  t.equal(parseTime('2024-01-02T03:04:05.500Z', 's'), Date.UTC(2024, 0, 2, 3, 4, 5, 500));
  t.equal(parseTime('1700000000', 's'), 1_700_000_000_000);
  t.equal(parseTime('1700000000.25', 's'), 1_700_000_000_250);
  t.equal(parseTime('1700000000123', 's'), 1_700_000_000_123);
  t.throws(() => parseTime('yesterday', 's'), { status: 400, errorCode: 'RECORDING_BAD_TIME' } as unknown as Error);
});
