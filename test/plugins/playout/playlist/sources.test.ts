import t from 'tap';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type TestApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { FFMPEG, portRange, run } from '../helpers.ts';
import { makeClip } from './media.ts';

/*
 * Issue 43 point 7: every way a source enters meets the process inputs' rules. Playlist items,
 * `playout:` inputs and stream switches meet `encoder.access.input`; an item never leads ffmpeg
 * out of the disk root, directly or through a playlist file it names (uploaded through the API),
 * and nothing about an outside file (its codec, its size) is stored. Real ffmpeg and ffprobe.
 */

/** A finished HLS playlist `name.m3u8` with 1 s segments `name<n>.ts`, made by ffmpeg in `dir`. */
async function makeHls(dir: string, name: string, seconds: number): Promise<void> {
  const r = await run(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=size=320x240:rate=25:duration=${seconds}`,
    '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-pix_fmt', 'yuv420p', '-f', 'hls', '-hls_time', '1', '-hls_list_size', '0',
    '-hls_playlist_type', 'vod', join(dir, `${name}.m3u8`)]);
  if (r.code !== 0) throw new Error(r.stderr);
}

const m3u8 = (...names: string[]) => `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n${names.map((n) => `#EXTINF:1.0,\n${n}\n`).join('')}#EXT-X-ENDLIST\n`;

async function upload(app: TestApp, path: string, text: string): Promise<void> {
  const r = await app.request('PUT', `/api/v3/fs/disk${path}`, { raw: text });
  if (r.status !== 201 && r.status !== 204) throw new Error(`upload ${path}: ${r.status} ${r.text}`);
}

t.test('items, playout inputs and stream switches meet encoder.access.input', async (t) => {
  const [min, max] = await portRange(4);
  const app = await startApp(t, {
    config: { playout: { enable: true, min_port: min, max_port: max }, encoder: { access: { input: { block: ['^http://blocked\\.invalid', 'forbidden'] } } } },
  });
  await makeClip(join(app.dir, 'disk', 'v'), 'forbidden.mp4', 1);
  const item = async (source: string) => app.request('PUT', '/api/v3/playlist/p', { body: { items: [{ source }] } });

  const direct = await app.request('POST', '/api/v3/process', { body: { id: 'd', input: [{ id: 'in', address: 'http://blocked.invalid/x.ts' }], output: [{ id: 'o', address: '-', options: ['-f', 'null'] }] } });
  t.equal(direct.status, 400, 'a blocked process input: 400 (as before)');
  const url = await item('http://blocked.invalid/x.mp4');
  t.equal(url.status, 400, 'the same URL as a playlist item: 400');
  t.match(url.body, { code: 400, details: [/^items\[0\]: http:\/\/blocked\.invalid\/x\.mp4: address is not allowed/] });
  const file = await item('/v/forbidden.mp4');
  t.equal(file.status, 400, 'a disk item whose path is blocked: 400');
  t.match(file.body.details?.[0], /address is not allowed/);
  t.same((await app.request('GET', '/api/v3/playlist')).body, [], 'nothing stored');

  const wrapped = await app.request('POST', '/api/v3/process', { body: { id: 'w', input: [{ id: 'in', address: 'playout:http://blocked.invalid/x.ts' }], output: [{ id: 'o', address: '-', options: ['-f', 'null'] }] } });
  t.equal(wrapped.status, 400, 'a playout: input whose URL is blocked: 400 (the list sees the URL behind the prefix)');
  t.match(JSON.stringify(wrapped.body), /not allowed/);

  // a running relay (its source does not answer: the relay sends its default clip)
  const proc = { id: 'r', autostart: true, input: [{ id: 'in', address: 'playout:http://127.0.0.1:9/none.ts' }], output: [{ id: 'o', address: '-', options: ['-f', 'null'] }] };
  t.equal((await app.request('POST', '/api/v3/process', { body: proc })).status, 200);
  await waitFor(async () => (await app.request('GET', '/api/v3/process/r/playout/in/status')).status === 200, { what: 'the relay', timeout: 30_000 });
  const sw = await app.request('PUT', '/api/v3/process/r/playout/in/stream', { raw: 'http://blocked.invalid/other.ts' });
  t.equal(sw.status, 400, 'a stream switch to a blocked URL: 400');
  t.match(sw.body, { code: 400, details: [/blocked\.invalid\/other\.ts: address is not allowed/] });
});

t.test('an item never leads ffmpeg out of the disk root; nothing about the outside file is stored', async (t) => {
  const [min, max] = await portRange(4);
  const app = await startApp(t, { config: { playout: { enable: true, min_port: min, max_port: max } } });
  const outside = await mkdtemp(join(tmpdir(), 'outside-'));
  t.teardown(() => rm(outside, { recursive: true, force: true }));
  await makeHls(outside, 'o', 2);
  const secret = join(outside, 'o0.ts');
  const size = (await stat(secret)).size;
  const disk = join(app.dir, 'disk');
  await makeClip(join(disk, 'v'), 'a.mp4', 1);
  await makeHls(join(disk, 'v'), 'good', 2);

  const rel = `../../../${outside.split('/').pop()}/o0.ts`;
  await upload(app, '/v/abs.m3u8', m3u8(secret));
  await upload(app, '/v/rel.m3u8', m3u8('good0.ts', rel));
  await upload(app, '/v/fileurl.m3u8', m3u8(`file:${secret}`));
  await upload(app, '/v/key.m3u8', m3u8('good0.ts').replace('#EXTINF', `#EXT-X-KEY:METHOD=AES-128,URI="${secret}"\n#EXTINF`));
  await upload(app, '/v/master.m3u8', '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=100000\nabs.m3u8\n');
  await upload(app, '/v/disguised.mp4', m3u8(secret));
  // an ID3v2 tag in front (ffmpeg's probe skips it): 30 bytes, the size 20 as four 7-bit bytes
  const id3 = Buffer.concat([Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x14', 'latin1'), Buffer.alloc(20)]);
  await writeFile(join(disk, 'v', 'tagged.mp3'), Buffer.concat([id3, Buffer.from(m3u8(secret))]));
  await writeFile(join(disk, 'v', 'tagged.ffconcat'), Buffer.concat([id3, Buffer.from(`ffconcat version 1.0\nfile ${secret}\n`)]));
  await upload(app, '/v/http.m3u8', m3u8('http://127.0.0.1:9/x.ts'));
  await upload(app, '/v/live.m3u8', m3u8('good0.ts').replace('#EXT-X-ENDLIST\n', ''));
  await upload(app, '/v/list.ffconcat', `ffconcat version 1.0\nfile a.mp4\n`);
  await writeFile(join(disk, 'v', 'dash.mp4'), `<?xml version="1.0"?>\n<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011"></MPD>\n`);

  const cases: [string, RegExp][] = [
    [secret, /no such file in the disk filesystem/],
    [rel, /\.\./],
    [`/v/${rel}`, /\.\./],
    [`file://${secret}`, /only http/],
    ['/v/abs.m3u8', /outside the disk filesystem/],
    ['/v/rel.m3u8', /outside the disk filesystem/],
    ['/v/fileurl.m3u8', /no URL, no file:/],
    ['/v/key.m3u8', /outside the disk filesystem/],
    ['/v/master.m3u8', /abs\.m3u8: .*outside the disk filesystem/],
    ['/v/disguised.mp4', /outside the disk filesystem/],
    ['/v/tagged.mp3', /outside the disk filesystem/],
    ['/v/tagged.ffconcat', /ffconcat/],
    ['/v/http.m3u8', /no URL/],
    ['/v/live.m3u8', /live playlist/],
    ['/v/list.ffconcat', /ffconcat/],
    ['/v/dash.mp4', /DASH/],
  ];
  for (const [source, why] of cases) {
    for (const mismatch of ['normalise', 'refuse']) {
      const r = await app.request('PUT', '/api/v3/playlist/p', { body: { items: [{ source }], mismatch } });
      t.equal(r.status, 400, `${source} (${mismatch}): 400`);
      t.match(r.body?.details?.[0], why, `${source}: ${r.body?.details?.[0]}`);
      t.notOk(r.text.includes('h264') || r.text.includes(String(size)), 'no fact about the outside file in the answer');
    }
  }
  t.same((await app.request('GET', '/api/v3/playlist')).body, [], 'nothing stored');

  const good = await app.request('PUT', '/api/v3/playlist/p', { body: { items: [{ source: '/v/good.m3u8' }, { source: '/v/a.mp4' }] } });
  t.equal(good.status, 200, `a finished playlist of disk segments is an item: ${good.text}`);
  t.match(good.body.items[0].media, { video: 'h264', width: 320 }, 'probed (through the protocol whitelist)');
  t.ok(good.body.items[0].media.duration >= 1.9, 'its whole duration');
});
