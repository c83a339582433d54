import t from 'tap';
import { s3Unavailable } from '../../../helpers/s3.ts';
import { waitFor } from '../../../helpers/wait.ts';
import type { TestApp } from '../../../helpers/app.ts';
import { startS3App } from '../../../plugins/s3-fs/helpers.ts';
import { state, waitState } from '../helpers.ts';
import { LAVFI_IN, ownFfmpegs, probeStreams } from './helpers.ts';

/*
 * The HLS demand on an S3 filesystem (issue 34), with real ffmpeg and the local S3 test server
 * (or the operator's store, S3_TEST_*): an on-demand process writing HLS through `{fs:cloud}`
 * waits with its waiting playlist in the bucket; a viewer's request on the S3 mount `/cloud`
 * starts it, ffmpeg's playlist replaces the waiting one, its segments play through the mount; it
 * stops after the viewer left and the waiting playlist is back in the bucket.
 */

const WAITING = '## on demand: waiting';
const skip = s3Unavailable();

function s3Process(id: string, name: string): Record<string, unknown> {
  return {
    id,
    input: [LAVFI_IN],
    output: [{
      id: 'out',
      address: `{fs:cloud}/live/${name}.m3u8`,
      options: [
        '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '25', '-f', 'hls', '-hls_time', '1',
        '-hls_list_size', '4', '-hls_flags', 'delete_segments', '-method', 'PUT', '-hls_segment_filename', `{fs:cloud}/live/${name}_%d.ts`,
      ],
    }],
    autostart: true,
    ondemand: { enable: true, idle_seconds: 3 },
  };
}

async function get(app: TestApp, path: string): Promise<{ status: number; text: string }> {
  const r = await fetch(`${app.url}${path}`);
  return { status: r.status, text: await r.text() };
}

t.test('a viewer on the S3 mount starts an on-demand process writing HLS into S3; it stops after the viewer left', { skip }, async (t) => {
  const { app } = await startS3App(t);
  const r = await app.request('POST', '/api/v3/process', { body: s3Process('cam9', 'cam9') });
  t.equal(r.status, 200, 'added');
  await waitState(app, 'cam9', (s) => s.ondemand?.waiting === true, 'waiting');
  // the waiting playlist is in the bucket (read through the API: no demand)
  await waitFor(async () => (await app.request('GET', '/api/v3/fs/cloud/live/cam9.m3u8')).text.includes(WAITING), { what: 'the waiting playlist in S3', timeout: 15_000 });
  t.same(ownFfmpegs('cam9.m3u8'), [], 'no ffmpeg runs before a viewer asks');
  const t0 = performance.now();
  const first = await get(app, '/cloud/live/cam9.m3u8');
  t.equal(first.status, 200);
  t.match(first.text, /cam9\.ondemand-slate\.ts/, 'the first answer is the waiting playlist with its slate clip');
  t.equal((await get(app, '/cloud/live/cam9.ondemand-slate.ts')).status, 200, 'the slate clip is served from S3');
  const playlist = await waitFor(async () => {
    const g = await get(app, '/cloud/live/cam9.m3u8');
    return g.status === 200 && !g.text.includes(WAITING) && g.text.includes('#EXTINF') ? g.text : undefined;
  }, { what: "ffmpeg's playlist in S3", timeout: 25_000, interval: 500 });
  const ms = performance.now() - t0;
  t.ok(ms < 4000, `ffmpeg's playlist within 4 s of asking (${Math.round(ms)} ms)`);
  t.match((await state(app, 'cam9')).ondemand, { waiting: false, started_by: 'hls' }, 'started by the viewer on the S3 mount');
  const seg = playlist.split('\n').find((l) => l.endsWith('.ts'))!;
  t.match(seg, /^cam9_\d+\.ts$/);
  t.ok((await probeStreams(`${app.url}/cloud/live/${seg}`)).includes('video'), 'ffprobe reads a segment through the S3 mount');
  await waitState(app, 'cam9', (s) => s.ondemand?.waiting === true && s.exec === 'finished', 'waiting again', 25_000);
  await waitFor(() => ownFfmpegs('cam9.m3u8').length === 0, { what: 'its ffmpeg gone' });
  await waitFor(async () => (await app.request('GET', '/api/v3/fs/cloud/live/cam9.m3u8')).text.includes(WAITING), { what: 'the waiting playlist back in S3', timeout: 15_000 });
  t.pass('the waiting playlist is back in S3');
});
