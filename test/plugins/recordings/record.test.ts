import t from 'tap';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../../helpers/wait.ts';
import { startRtmpApp, publish } from '../rtmp/helpers.ts';
import { probe } from './helpers.ts';

/*
 * A stream published over RTMP by ffmpeg (keyframe every second), recorded to the disk filesystem
 * through the stream table: a source drop makes two spans, cuts (mp4, ts) start within one GOP of
 * the asked start and play, retention deletes old segments. REC_TEST_SECONDS sets the length of
 * each publish (default 60: the 2-minute recording, with a 30 s cut; shorter to try it).
 */
const SECONDS = Number(process.env.REC_TEST_SECONDS ?? 60);
const CUT = Math.min(30, SECONDS - 2);

/** Not reading, every segment stored. */
const stopped = (r: { recording: boolean; storing: number }) => !r.recording && r.storing === 0;

t.test('recorded over a source drop: two spans, cuts from a keyframe that play', async (t) => {
  const app = await startRtmpApp(t, {}, { recordings: { enable: true } });
  const made = await app.request('POST', '/api/v3/recordings', { body: { name: 'cam', stream: '/live/cam', segment_seconds: 2 } });
  t.equal(made.status, 201, JSON.stringify(made.body));
  t.equal(made.body.recording, false, 'not recording before the publish');
  t.equal((await app.request('POST', '/api/v3/recordings', { body: { name: 'cam', stream: 'x' } })).status, 409, 'a name once');

  for (const round of [1, 2]) {
    const pub = publish(t, `${app.base}/live/cam`, { seconds: SECONDS });
    await waitFor(async () => (await app.request('GET', '/api/v3/recordings/cam')).body.recording, { timeout: 30_000, what: 'recording' });
    t.equal(await pub.done, 0, `publish ${round} ran (${pub.stderr()})`);
    await waitFor(async () => stopped((await app.request('GET', '/api/v3/recordings/cam')).body), { what: 'the recording to stop' });
    if (round === 1) await new Promise((r) => setTimeout(r, 3000)); // the gap
  }
  const rec = (await app.request('GET', '/api/v3/recordings/cam')).body;
  t.equal(rec.spans.length, 2, `two spans (${JSON.stringify(rec.spans)})`);
  for (const s of rec.spans) t.ok(Math.abs(s.duration - SECONDS) <= 1.5, `a span of about ${SECONDS} s (${s.duration})`);
  t.ok(rec.spans[1].start_ms - (rec.spans[0].start_ms + rec.spans[0].duration * 1000) >= 2500, 'the gap is there');
  const [first] = rec.spans;
  const inRange = (await app.request('GET', `/api/v3/recordings/cam?start=${first.start}&end=${first.start}`)).body;
  t.equal(inRange.spans.length, 1, 'spans of a range (RFC 3339)');
  t.ok(existsSync(join(app.dir, 'disk', 'recordings', 'cam', new Date(first.start_ms).toISOString().slice(0, 10))), 'segments under <prefix>/<name>/<date>/');

  const start = first.start_ms + 1450;
  for (const format of ['mp4', 'ts'] as const) {
    const res = await fetch(`${app.url}/api/v3/recordings/cam/get?start=${start / 1000}&duration=${CUT}&format=${format}`);
    const bytes = Buffer.from(await res.arrayBuffer());
    t.equal(res.status, 200, `${format} cut (${res.status === 200 ? bytes.length : bytes.toString()})`);
    const cutStart = Date.parse(res.headers.get('x-recording-start')!);
    t.ok(cutStart <= start && cutStart > start - 1000, `${format}: from the keyframe within one GOP before (${start - cutStart} ms)`);
    const p = await probe(bytes, format === 'mp4' ? 'mp4' : 'mpegts');
    t.ok(p.firstKey, `${format}: the first frame is a keyframe`);
    const want = CUT + (start - cutStart) / 1000;
    t.ok(Math.abs(p.duration - want) <= 0.6, `${format}: ${p.duration} s of video, asked ${want}`);
    if (format === 'mp4') t.ok(p.firstPts < 0.2, `mp4 starts at 0 (${p.firstPts})`);
  }
  t.equal((await app.request('GET', `/api/v3/recordings/cam/get?start=${start}&duration=100000`)).status, 400, 'bounded duration');
  t.equal((await app.request('GET', `/api/v3/recordings/cam/get?start=1000`)).status, 404, 'nothing recorded then');
  t.equal((await app.request('DELETE', '/api/v3/recordings/cam')).status, 204, 'deleted');
  t.notOk(existsSync(join(app.dir, 'disk', 'recordings', 'cam', new Date(first.start_ms).toISOString().slice(0, 10), `${first.start_ms}.ts`)), 'with its files');
});

t.test('retention by size after each segment and by age on the timer', async (t) => {
  const app = await startRtmpApp(t, {}, { recordings: { enable: true, retention_interval_seconds: 1 } });
  const body = (name: string, retention: Record<string, number>) => ({ body: { name, stream: 'live/ret', segment_seconds: 1, filesystem: 'memfs', retention } });
  t.equal((await app.request('POST', '/api/v3/recordings', body('small', { max_bytes: 60_000 }))).status, 201);
  t.equal((await app.request('POST', '/api/v3/recordings', body('young', { max_age_seconds: 3 }))).status, 201);
  const pub = publish(t, `${app.base}/live/ret`, { seconds: 8 });
  t.equal(await pub.done, 0, 'published');
  const files = async (name: string) => (await app.request('GET', `/api/v3/fs/mem?glob=/recordings/${name}/**`)).body as Array<{ name: string }>;
  const small = await waitFor(async () => {
    const r = (await app.request('GET', '/api/v3/recordings/small')).body;
    return stopped(r) && r;
  }, { what: 'the recording to stop' });
  t.ok(small.bytes <= 60_000 && small.segments >= 1, `at most max_bytes kept (${small.bytes} in ${small.segments})`);
  t.equal((await files('small')).length, small.segments, 'the files are the index');
  t.ok(small.spans[0].duration < 6, 'old segments left the index');
  await waitFor(async () => (await app.request('GET', '/api/v3/recordings/young')).body.segments === 0, { timeout: 15_000, what: 'age retention' });
  t.equal((await files('young')).length, 0, 'and their files');
});
