import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';

/*
 * Issue 49.2, the seam between reads by `fs` policies and the service's own children: with
 * `$anon` allowed nothing, a stranger's read of memfs is a 401, while a process reading what
 * another writes there (`{memfs}`, memfs auth on: the placeholder carries the run's credential)
 * keeps reading. Real ffmpeg on both sides.
 */

const ENCODE = ['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10', '-pix_fmt', 'yuv420p'];

t.test('a child reads memfs with its run\'s credential where $anon may read nothing', async (t) => {
  const app = await startApp(t, { config: { iam: { enable: true }, storage: { memory: { auth: { enable: true, username: 'writer', password: 'mem-pass-3e8b1' } } } } });
  t.equal((await app.request('PUT', '/api/v3/iam/user/$anon/policy', { body: [] })).status, 200, '$anon may read nothing');
  const procs = [
    { id: 'pub', input: [{ id: 'in', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }],
      output: [{ id: 'out', address: '{memfs}/chan.m3u8', options: [...ENCODE, '-f', 'hls', '-hls_time', '1', '-hls_list_size', '4', '-method', 'PUT'] }] },
    { id: 'reader', input: [{ id: 'in', address: '{memfs}/chan.m3u8', options: [] }], output: [{ id: 'out', address: '-', options: ['-c', 'copy', '-f', 'null'] }] },
  ];
  t.equal((await app.request('POST', '/api/v3/process', { body: { ...procs[0], autostart: true } })).status, 200);
  await waitFor(async () => (await app.request('GET', '/memfs/chan.m3u8', { headers: { authorization: `Basic ${Buffer.from('writer:mem-pass-3e8b1').toString('base64')}` } })).status === 200,
    { timeout: 60_000, what: 'the HLS of pub' });
  t.equal((await app.request('POST', '/api/v3/process', { body: { ...procs[1], autostart: true, reconnect: true, reconnect_delay_seconds: 1 } })).status, 200);
  const frames = await waitFor(async () => {
    const s = (await app.request('GET', '/api/v3/process/reader/state')).body;
    return (s?.progress?.frame ?? 0) > 20 ? s.progress.frame as number : undefined;
  }, { timeout: 60_000, what: 'frames read by the reader' });
  t.ok(frames > 20, `the child reads (${frames} frames)`);
  const stranger = await app.request('GET', '/memfs/chan.m3u8');
  t.equal(stranger.status, 401, 'a stranger does not');
  for (const id of ['reader', 'pub']) await app.request('DELETE', `/api/v3/process/${id}`);
});
