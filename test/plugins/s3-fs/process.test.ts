import t from 'tap';
import { execFile } from 'node:child_process';
import type { TestApp } from '../../helpers/app.ts';
import { s3Unavailable } from '../../helpers/s3.ts';
import { waitFor } from '../../helpers/wait.ts';
import { addProcess, hlsWithCleanup } from '../../core/process/helpers.ts';
import { startS3App } from './helpers.ts';

/*
 * A process (real ffmpeg, supervised and confined by the service) writes HLS into S3 through
 * `{fs:cloud}`; players read it through the mount; the process's cleanup rules name the S3
 * filesystem (`cloud:/...`) and bound its segments; purge_on_delete clears them from S3.
 */

const skip = s3Unavailable();

const segments = async (app: TestApp, id: string): Promise<string[]> =>
  ((await app.request('GET', '/api/v3/fs/cloud')).body as { name: string }[])
    .map((f) => f.name).filter((n) => n.startsWith(`/${id}_`)).sort();

t.test('a process writes HLS into S3: played through the mount, bounded by its cleanup rule, purged on delete', { skip }, async (t) => {
  const { app } = await startS3App(t);
  await addProcess(app, hlsWithCleanup('cam', '{fs:cloud}', 'cloud'));
  await waitFor(async () => (await segments(app, 'cam')).some((n) => Number(/_(\d+)\.ts$/.exec(n)?.[1]) >= 7), { what: 'segment 7 in S3', timeout: 45_000 });
  // the playlist and its newest segment, read as a player does through the mount
  const playlist = await app.request('GET', '/cloud/cam.m3u8');
  t.equal(playlist.status, 200, 'the playlist through the mount');
  t.match(playlist.text, /cam_\d+\.ts/, 'it lists the segments');
  const newest = (await segments(app, 'cam')).sort((a, b) => Number(/_(\d+)/.exec(b)![1]) - Number(/_(\d+)/.exec(a)![1]))[0]!;
  const res = await fetch(`${app.url}/cloud${newest}`);
  const seg = Buffer.from(await res.arrayBuffer());
  t.equal(res.status, 200, `GET ${newest}: ${seg.length} bytes`);
  const out = await new Promise<string>((resolve) => {
    const child = execFile('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=codec_name,width', '-of', 'csv=p=0', '-f', 'mpegts', '-i', 'pipe:0'],
      { timeout: 30_000 }, (err, stdout, stderr) => resolve(`${stdout}${err ? ` ${stderr}` : ''}`));
    child.stdin!.end(seg);
  });
  t.match(out.trim(), /^h264,160/, `ffprobe reads ${newest} from S3 through the mount`);
  // the rule trims to 3 each second while the encoder adds one each 0.5 s: a listing may never fall in
  // the window after a trim on a loaded box, so the encoder stops (rules hold for a stopped process)
  t.equal((await app.request('PUT', '/api/v3/process/cam/command', { body: { command: 'stop' } })).status, 200);
  const bounded = await waitFor(async () => {
    const names = await segments(app, 'cam');
    return names.length <= 3 ? names : undefined;
  }, { what: 'at most 3 segments in S3', timeout: 45_000 });
  const numbers = bounded.map((n) => Number(/_(\d+)\.ts$/.exec(n)![1]));
  t.ok(Math.min(...numbers) >= 4, `the rule kept the newest: ${bounded.join(', ')}`);

  t.equal((await app.request('DELETE', '/api/v3/process/cam')).status, 200);
  const all = async () => ((await app.request('GET', '/api/v3/fs/cloud')).body as { name: string }[]).map((f) => f.name);
  await waitFor(async () => (await all()).every((n) => !n.startsWith('/cam')), { what: 'playlist and segments purged from S3', timeout: 30_000 });
  await new Promise((r) => setTimeout(r, 2500));
  t.same((await all()).filter((n) => n.startsWith('/cam')), [], 'purged on delete and they stay gone');
});
