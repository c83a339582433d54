import t, { type Test } from 'tap';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { eventsRef, type EventsService } from '../../../sdk/index.ts';
import type { TestApp, TestLike } from '../../helpers/app.ts';
import { s3Entry, s3Unavailable, startS3, type S3Target } from '../../helpers/s3.ts';
import { waitFor } from '../../helpers/wait.ts';
import { publish, startRtmpApp } from '../rtmp/helpers.ts';
import { probe } from './helpers.ts';

/*
 * Recordings into an S3 filesystem (`storage.s3` entry `cloud`, a real S3-compatible server: the
 * local test server, or the operator's with S3_TEST_ENDPOINT), fed by ffmpeg publishing RTMP
 * (keyframe every second): segments land in S3, cuts are served from S3, retention deletes there
 * too; and the S3 server stopped for 30 s in the middle of a recording loses no segment while the
 * upload buffer (`s3fs_buffer_bytes`) stays bounded.
 */
const skip = s3Unavailable();
/** The upload buffer's bound for all S3 filesystems (plugins/s3-fs/README.md, `DEFAULT_BUFFER_BYTES`). */
const BUFFER_BOUND = 64 * 1024 * 1024;
const OUTAGE_MS = Number(process.env.REC_S3_OUTAGE_SECONDS ?? 30) * 1000;

interface Listed { name: string; size_bytes: number }
interface Indexed { file: string; bytes: number; start: number; duration: number }
interface View { recording: boolean; storing: number; segments: number; bytes: number; spans: Array<{ start: string; start_ms: number; duration: number }> }

async function s3RecApp(t: TestLike): Promise<{ app: TestApp & { base: string }; s3: S3Target }> {
  const s3 = await startS3(t);
  const app = await startRtmpApp(t, {}, {
    recordings: { enable: true, retention_interval_seconds: 1 },
    metrics: { enable: true, interval_sec: 1, range_sec: 120 },
    storage: { s3: [s3Entry(s3)] },
  });
  return { app, s3 };
}

const view = async (app: TestApp, name: string): Promise<View> => (await app.request('GET', `/api/v3/recordings/${name}`)).body as View;
/** Not reading, every segment stored. */
const stopped = (r: View) => !r.recording && r.storing === 0;

/** The objects of a recording as the S3 filesystem lists them (404/503 throw). */
async function listed(app: TestApp, name: string): Promise<Listed[]> {
  const r = await app.request('GET', `/api/v3/fs/cloud?glob=/recordings/${name}/**`);
  if (r.status !== 200) throw new Error(`listing: ${r.status} ${r.text}`);
  return r.body as Listed[];
}

/** The recording's index as stored under the data dir. */
async function indexed(app: TestApp, name: string): Promise<Indexed[]> {
  const doc = JSON.parse(await readFile(join(app.dir, 'db', 'plugins', 'recordings', `index-${name}.json`), 'utf8')) as { segments: Indexed[] };
  return doc.segments;
}

/** The values of an `s3fs_*` metric of `cloud`: now (timerange 0) or the history of `timerange` seconds. */
async function metric(app: TestApp, name: string, timerange = 0): Promise<number[]> {
  const r = await app.request('POST', '/api/v3/metrics', { body: { timerange_sec: timerange, interval_sec: 1, metrics: [{ name, labels: { name: 'cloud' } }] } });
  const values = (r.body.metrics?.[0]?.values ?? []) as Array<[number, number]>;
  return values.map((v) => v[1]);
}

/** Every indexed file is an object of that size in S3, and nothing else is there (the buffer is empty). */
async function sameAsS3(t: Test, app: TestApp, name: string): Promise<Indexed[]> {
  t.same(await metric(app, 's3fs_buffer_files'), [0], 'nothing waits in the upload buffer: the listing is S3\'s');
  const index = await indexed(app, name);
  const objects = new Map((await listed(app, name)).map((o) => [o.name, o.size_bytes]));
  t.same(index.filter((s) => objects.get(s.file) !== s.bytes).map((s) => s.file), [], `every indexed segment of ${name} is in S3, whole (${index.length})`);
  t.equal(objects.size, index.length, `S3 holds no other segment of ${name}`);
  return index;
}

/** The segments of the index fill its one span: none missing (a hole of one short segment would still join the span). */
function filled(t: Test, index: readonly Indexed[], span: { duration: number }): void {
  const media = index.reduce((n, s) => n + s.duration, 0) / 1000;
  t.ok(Math.abs(media - span.duration) < 0.3, `the segments hold the whole span (${media} s of ${span.duration} s)`);
}

t.test('recorded into S3: segments listed there, one span, cuts from S3 play from a keyframe, retention deletes in S3', { skip }, async (t) => {
  const { app } = await s3RecApp(t);
  const body = (name: string, seconds: number, retention: Record<string, number> = {}) =>
    ({ body: { name, stream: 'live/cam', filesystem: 'cloud', segment_seconds: seconds, retention } });
  t.equal((await app.request('POST', '/api/v3/recordings', body('cam', 2))).status, 201, 'a recording into cloud');
  t.equal((await app.request('POST', '/api/v3/recordings', body('small', 1, { max_bytes: 60_000 }))).status, 201, 'one bounded by size');
  const pub = publish(t, `${app.base}/live/cam`, { seconds: 12 });
  await waitFor(async () => (await view(app, 'cam')).recording, { timeout: 30_000, what: 'recording' });
  t.equal(await pub.done, 0, `published (${pub.stderr()})`);
  const cam = await waitFor(async () => { const v = await view(app, 'cam'); return stopped(v) ? v : undefined; }, { what: 'cam to stop' });
  await waitFor(async () => stopped(await view(app, 'small')), { what: 'small to stop' });

  const index = await sameAsS3(t, app, 'cam');
  t.ok(index.length >= 5, `segments of about 2 s (${index.length})`);
  t.ok(index.every((s) => s.file.startsWith(`/recordings/cam/${new Date(s.start).toISOString().slice(0, 10)}/`)), 'under <prefix>/<name>/<date>/');
  t.equal(cam.spans.length, 1, `one span (${JSON.stringify(cam.spans)})`);
  t.ok(Math.abs(cam.spans[0]!.duration - 12) <= 1.5, `of about 12 s (${cam.spans[0]!.duration})`);

  const start = cam.spans[0]!.start_ms + 2450;
  for (const format of ['mp4', 'ts'] as const) {
    const res = await fetch(`${app.url}/api/v3/recordings/cam/get?start=${start / 1000}&duration=6&format=${format}`);
    const bytes = Buffer.from(await res.arrayBuffer());
    t.equal(res.status, 200, `${format} cut from S3 (${res.status === 200 ? bytes.length : bytes.toString()})`);
    const cutStart = Date.parse(res.headers.get('x-recording-start')!);
    t.ok(cutStart <= start && cutStart > start - 1000, `${format}: from the keyframe within one GOP before (${start - cutStart} ms)`);
    const p = await probe(bytes, format === 'mp4' ? 'mp4' : 'mpegts');
    t.ok(p.firstKey, `${format}: the first frame is a keyframe`);
    const want = 6 + (start - cutStart) / 1000;
    t.ok(Math.abs(p.duration - want) <= 0.6, `${format}: ${p.duration} s of video, asked ${want}`);
  }

  const small = await sameAsS3(t, app, 'small');
  t.ok(small.reduce((n, s) => n + s.bytes, 0) <= 60_000 && small.length >= 1, 'size retention kept at most max_bytes');
  t.ok(small[0]!.start > index[0]!.start + 2000, 'the oldest segments of small left S3');

  const aged = await app.request('PUT', '/api/v3/recordings/cam', { body: { ...body('cam', 2, { max_age_seconds: 1 }).body, name: undefined } });
  t.equal(aged.status, 200, `cam kept for 1 s now (${aged.text})`);
  await waitFor(async () => (await view(app, 'cam')).segments === 0, { timeout: 15_000, what: 'age retention' });
  await waitFor(async () => (await listed(app, 'cam')).length === 0, { timeout: 15_000, what: 'the segments deleted in S3' });
  t.pass('age retention deleted every segment of cam in S3');
  t.same(await metric(app, 's3fs_lost'), [0], 'nothing reported lost');
});

t.test(`S3 stopped for ${OUTAGE_MS / 1000} s while recording: no segment lost, no gap, the buffer bounded`, { skip }, async (t) => {
  const { app, s3 } = await s3RecApp(t);
  if (!s3.local) { t.comment('the outage needs the local test server'); return; }
  const made = await app.request('POST', '/api/v3/recordings', { body: { name: 'cam', stream: 'live/cam', filesystem: 'cloud', segment_seconds: 2 } });
  t.equal(made.status, 201);
  const seconds = OUTAGE_MS / 1000 + 20;
  const pub = publish(t, `${app.base}/live/cam`, { seconds });
  await waitFor(async () => (await listed(app, 'cam')).length >= 2, { timeout: 30_000, what: 'the first segments in S3' });
  await s3.stop();
  const downAt = Date.now();
  let peak = 0;
  let during = 0;
  while (Date.now() - downAt < OUTAGE_MS) {
    peak = Math.max(peak, ...(await metric(app, 's3fs_buffer_bytes')));
    const v = await view(app, 'cam');
    if (!v.recording) break;
    during = v.segments;
    await new Promise((r) => setTimeout(r, 500));
  }
  const v = await view(app, 'cam');
  t.ok(v.recording, 'still recording through the outage');
  t.same(await metric(app, 's3fs_buffer_files').then((f) => f[0]! > 0), true, 'segments wait in the upload buffer');
  await s3.start();
  t.equal(await pub.done, 0, `published for ${seconds} s (${pub.stderr()})`);
  const rec = await waitFor(async () => { const r = await view(app, 'cam'); return stopped(r) ? r : undefined; }, { what: 'the recording to stop' });
  await waitFor(async () => (await metric(app, 's3fs_buffer_files'))[0] === 0, { timeout: 30_000, what: 'the buffer drained' });

  const index = await sameAsS3(t, app, 'cam');
  t.ok(during >= OUTAGE_MS / 2000 - 3, `segments were indexed during the outage (${during})`);
  t.equal(index.length, rec.segments, 'the index is the view');
  t.equal(rec.spans.length, 1, `one span: no gap from the outage (${JSON.stringify(rec.spans)})`);
  filled(t, index, rec.spans[0]!);
  t.ok(Math.abs(rec.spans[0]!.duration - seconds) <= 2, `of about ${seconds} s (${rec.spans[0]!.duration})`);
  peak = Math.max(peak, ...(await metric(app, 's3fs_buffer_bytes', 120)));
  t.ok(peak > 0, `s3fs_buffer_bytes rose during the outage (peak ${peak})`);
  t.ok(peak < BUFFER_BOUND, `and stayed under the bound of ${BUFFER_BOUND}`);
  t.ok(peak <= rec.bytes, `it held at most what was recorded (${peak} of ${rec.bytes})`);
  t.same(await metric(app, 's3fs_lost'), [0], 'nothing reported lost');
});

t.test('S3 hung (answers nothing) for 12 s while recording 1 s segments: writers do not wait, nothing dropped', { skip }, async (t) => {
  const { app, s3 } = await s3RecApp(t);
  if (!s3.local) { t.comment('the hang needs the local test server'); return; }
  const failed: string[] = [];
  const bus = app.service.app.kernel.services.resolve(eventsRef) as EventsService;
  const sub = bus.subscribe({ types: ['recording.segment.failed'] }, undefined, (e) => failed.push(JSON.stringify(e.payload)));
  t.teardown(() => sub.close());
  const made = await app.request('POST', '/api/v3/recordings', { body: { name: 'cam', stream: 'live/cam', filesystem: 'cloud', segment_seconds: 1 } });
  t.equal(made.status, 201);
  const pub = publish(t, `${app.base}/live/cam`, { seconds: 24 });
  await waitFor(async () => (await listed(app, 'cam')).length >= 2, { timeout: 30_000, what: 'the first segments in S3' });
  s3.pause();
  const frozenAt = Date.now();
  let most = 0;
  while (Date.now() - frozenAt < 12_000) {
    most = Math.max(most, (await view(app, 'cam')).storing);
    await new Promise((r) => setTimeout(r, 250));
  }
  s3.resume();
  t.ok(most < 4, `segments never piled up behind a hung write (at most ${most} waiting)`);
  t.equal(await pub.done, 0, `published (${pub.stderr()})`);
  const rec = await waitFor(async () => { const r = await view(app, 'cam'); return stopped(r) ? r : undefined; }, { what: 'the recording to stop' });
  await waitFor(async () => (await metric(app, 's3fs_buffer_files'))[0] === 0, { timeout: 40_000, what: 'the buffer drained' });
  const index = await sameAsS3(t, app, 'cam');
  t.same(failed, [], 'no segment failed');
  t.equal(rec.spans.length, 1, `one span (${JSON.stringify(rec.spans)})`);
  filled(t, index, rec.spans[0]!);
  t.ok(Math.abs(rec.spans[0]!.duration - 24) <= 2, `of about 24 s (${rec.spans[0]!.duration})`);
  t.same(await metric(app, 's3fs_lost'), [0], 'nothing reported lost');
});
