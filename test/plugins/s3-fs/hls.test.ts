import t from 'tap';
import { spawn } from 'node:child_process';
import { filesystemsRef, type FilesystemService } from '../../../sdk/index.ts';
import type { TestApp, TestLike } from '../../helpers/app.ts';
import { s3Unavailable } from '../../helpers/s3.ts';
import { waitFor } from '../../helpers/wait.ts';
import { runUrl } from '../../helpers/run-url.ts';
import { startS3App } from './helpers.ts';

const FFMPEG = '/usr/bin/ffmpeg';
const FFPROBE = '/usr/bin/ffprobe';
const skip = s3Unavailable();

/** Runs a program to completion (killed at the deadline and at teardown). */
function run(t: TestLike, bin: string, args: string[], timeoutMs = 60_000): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['-hide_banner', ...(bin === FFMPEG ? ['-nostdin'] : []), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-4000); });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    t.teardown(() => { clearTimeout(timer); child.kill('SIGKILL'); });
    child.on('error', reject);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, out, err }); });
  });
}

const hls = (seconds: number, url: string) => ['-loglevel', 'warning', '-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10', '-t', String(seconds),
  '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '10', '-pix_fmt', 'yuv420p',
  '-f', 'hls', '-hls_time', '1', '-hls_list_size', '0', '-method', 'PUT', url];


function cloud(app: TestApp): FilesystemService & { pending: { bytes: number; files: number; healthy: boolean } } {
  const list = app.service.app.kernel.services.resolve(filesystemsRef) as FilesystemService[];
  return list.find((f) => f.name === 'cloud') as FilesystemService & { pending: { bytes: number; files: number; healthy: boolean } };
}

const segmentsOf = (playlist: string) => playlist.split('\n').filter((l) => l && !l.startsWith('#'));

t.test('ffmpeg writes HLS through {fs:cloud} into S3; ffprobe plays it back through the mount', { skip }, async (t) => {
  const { app } = await startS3App(t);
  const url = runUrl(t, app, 'fs:cloud', '/live/x.m3u8');
  t.match(url, /^http:\/\/process:p:[\w-]{32}@127\.0\.0\.1:\d+\/cloud\/live\/x\.m3u8$/, 'the run\'s credential in the URL, not the mount\'s');
  const w = await run(t, FFMPEG, hls(4, url));
  t.equal(w.code, 0, w.err);
  // a write is answered once buffered: the last playlist reaches S3 a moment after ffmpeg ended
  const playlist = await waitFor(async () => {
    const r = await app.request('GET', '/cloud/live/x.m3u8');
    return r.status === 200 && r.text.includes('#EXT-X-ENDLIST') ? r : undefined;
  }, { timeout: 15_000, what: 'the final playlist (#EXT-X-ENDLIST) in S3' });
  t.equal(playlist.status, 200);
  t.match(playlist.text, /#EXT-X-ENDLIST/);
  const probe = await run(t, FFPROBE, ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', `${app.url}/cloud/live/x.m3u8`]);
  t.equal(probe.code, 0, probe.err);
  t.ok(Number(probe.out.trim()) >= 3, `duration ${probe.out.trim()}`);
  t.equal(cloud(app).pending.files, 0, 'nothing left in the buffer');
});

t.test('S3 down for 12 s while ffmpeg writes: no segment lost, buffer bounded, the service answers meanwhile', { skip }, async (t) => {
  const { app, s3 } = await startS3App(t);
  if (!s3.local) { t.comment('the outage needs the local test server'); return; }
  const fs = cloud(app);
  const writer = run(t, FFMPEG, hls(22, runUrl(t, app, 'fs:cloud', '/o/x.m3u8')), 90_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/fs/cloud?glob=/o/*.ts')).body.length >= 2, { what: 'first segments in S3' });
  await s3.stop();
  const downAt = Date.now();
  let maxBuffered = 0;
  let answered = 0;
  while (Date.now() - downAt < 12_000) {
    maxBuffered = Math.max(maxBuffered, fs.pending.bytes);
    const r = await app.request('PUT', '/api/v3/fs/mem/ping.txt', { raw: 'x' });
    if (r.status === 201 || r.status === 204) answered++;
    await new Promise((r) => setTimeout(r, 250));
  }
  t.ok(fs.pending.files > 0 && !fs.pending.healthy, `segments wait in the buffer (${fs.pending.files})`);
  t.ok(answered >= 30, `other filesystems answered during the outage (${answered})`);
  const list = await app.request('GET', '/api/v3/fs/cloud?glob=/o/*');
  t.equal(list.status, 503, `a listing while S3 is down is 503 (${list.text})`);
  t.equal(list.body.code, 503);
  await s3.start();
  const w = await writer;
  t.equal(w.code, 0, w.err);
  await waitFor(() => fs.pending.files === 0, { timeout: 30_000, what: 'the buffer drained' });
  t.ok(maxBuffered > 0 && maxBuffered < 64 * 1024 * 1024, `buffer bounded (${maxBuffered} bytes at most)`);
  const playlist = await app.request('GET', '/cloud/o/x.m3u8');
  const segments = segmentsOf(playlist.text);
  t.ok(segments.length >= 18, `segments in the playlist (${segments.length})`);
  const stored = new Set((await app.request('GET', '/api/v3/fs/cloud?glob=/o/*.ts')).body.map((f: { name: string }) => f.name));
  t.same(segments.filter((s) => !stored.has(`/o/${s}`)), [], 'every segment of the playlist is in S3');
  const m = await app.request('POST', '/api/v3/metrics', { body: { metrics: [{ name: 's3fs_lost', labels: { name: 'cloud' } }] } });
  t.equal(m.body.metrics[0].values.at(-1)[1], 0, 'nothing reported lost');
});
