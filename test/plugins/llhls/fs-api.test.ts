import t from 'tap';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg, startRtmpApp } from '../rtmp/helpers.ts';

/*
 * The `llhls` filesystem through the API (`/api/v3/fs/llhls`, issue 47.2): it lists what the
 * packagers hold and reads a file by its path, refuses writes and deletes (403
 * `LLHLS_READ_ONLY`), and a stream past `max_streams` is refused 503 `LLHLS_LIMIT`.
 */
const SOURCE = ['-loglevel', 'warning', '-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25', '-c:v', 'libx264', '-preset', 'ultrafast',
  '-tune', 'zerolatency', '-g', '25', '-pix_fmt', 'yuv420p', '-t', '40', '-f', 'flv'];

t.test('the llhls filesystem in the API: listed and read, read-only; the stream limit', async (t) => {
  const app = await startRtmpApp(t, {}, { llhls: { enable: true, target_duration_seconds: 1, part_target_ms: 200, max_streams: 1 } });
  ffmpeg(t, [...SOURCE, `${app.base}/live/one`]);
  ffmpeg(t, [...SOURCE, `${app.base}/live/two`]);
  await waitFor(() => app.rtmp.channels().length === 2 || undefined, { what: 'both publishers', timeout: 20_000 });
  const text = await waitFor(async () => {
    const r = await fetch(`${app.url}/hls/live/one/index.m3u8`);
    const body = await r.text();
    return r.status === 200 && body.includes('#EXTINF') ? body : undefined;
  }, { what: 'a segment of live/one', timeout: 30_000 });
  const init = /#EXT-X-MAP:URI="([^"]+)"/.exec(text)![1]!;

  const list = await app.request('GET', '/api/v3/fs/llhls');
  t.equal(list.status, 200);
  const names = (list.body as Array<{ name: string; size_bytes: number }>).map((f) => f.name);
  t.ok(names.includes(`/live/one/${init}`), `the init is listed (${names.length} files)`);
  t.ok(names.some((n) => /^\/live\/one\/[0-9a-f]{16}-\d+\.m4s$/.test(n)), 'and a segment');
  const read = await fetch(`${app.url}/api/v3/fs/llhls/live/one/${init}`);
  t.equal(read.status, 200, 'a file read by its path');
  t.equal(Buffer.from(await read.arrayBuffer()).subarray(4, 8).toString(), 'ftyp', 'the init section');
  t.equal((await app.request('GET', '/api/v3/fs/llhls/live/one/nothing.m4s')).status, 404);

  const del = await app.request('DELETE', `/api/v3/fs/llhls/live/one/${init}`);
  t.equal(del.status, 403, 'no delete');
  t.match(del.body, { code: 403, details: ['the llhls filesystem is read-only'] });
  t.equal((await app.request('PUT', '/api/v3/fs/llhls/live/one/x.m4s', { raw: 'x' })).status, 403, 'no write');

  const two = await fetch(`${app.url}/hls/live/two/index.m3u8`);
  t.equal(two.status, 503, 'one stream more than max_streams');
  t.match(await two.json(), { code: 503, details: ['1 streams are packaged already (llhls.max_streams)'] });
});
