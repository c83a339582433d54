import t from 'tap';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { deepMerge } from '../../../../core/config/schema-walk.ts';
import { portRange } from '../helpers.ts';
import { makeClip } from './media.ts';

/*
 * sample-config/channel-24-7 as its README runs it: the config (own folders, port 0, a free port
 * range), its playlist and its process, on short generated files. The playlist's format is made
 * small (320x240) so a busy test box encodes it in real time; everything else is the sample's.
 */

const DIR = fileURLToPath(new URL('../../../../sample-config/channel-24-7/', import.meta.url));
const read = async (file: string) => JSON.parse(await readFile(join(DIR, file), 'utf8')) as Record<string, unknown>;

t.test('sample-config/channel-24-7 plays its playlist into HLS', async (t) => {
  const [min, max] = await portRange(4);
  const dir = t.testdir({});
  const config = deepMerge(await read('config.json'), {
    address: '127.0.0.1:0', db: { dir: join(dir, 'db') },
    // memfs write auth off as in every HLS test here: with it on, this harness's ffmpeg PUTs got 401
    storage: { disk: { dir: join(dir, 'disk') }, memory: { auth: { enable: false } } },
    playout: { min_port: min, max_port: max },
  });
  const app = await startApp(t, { config });
  const videos = join(dir, 'disk', 'videos');
  await Promise.all([makeClip(videos, 'ident.mp4', 1), makeClip(videos, 'show-1.mp4', 3, '480x270'), makeClip(videos, 'show-2.mp4', 3)]);
  const playlist = await read('playlist.json') as { items: { source: string; in?: number; out?: number }[] };
  // the sample cuts show-2 at 60-1860 s; the generated file is 3 s long
  const items = playlist.items.map((i) => (i.in !== undefined ? { ...i, in: 1, out: 2.5 } : i));
  const body = { ...playlist, items, format: { width: 320, height: 240, fps: 25, video_bitrate_kbit: 300, audio_bitrate_kbit: 64 } };
  const put = await app.request('PUT', '/api/v3/playlist/channel', { body });
  t.equal(put.status, 200, `the sample's playlist is stored ${put.status === 200 ? '' : put.text}`);
  const post = await app.request('POST', '/api/v3/process', { body: await read('process.json') });
  t.equal(post.status, 200, `the sample's process is added ${post.status === 200 ? '' : post.text}`);
  const segments = await waitFor(async () => {
    const r = await app.request('GET', '/memfs/channel.m3u8');
    const n = r.status === 200 ? r.text.split('\n').filter((l) => l.endsWith('.ts')).length : 0;
    return n >= 3 ? n : undefined;
  }, { what: 'HLS segments of the channel', timeout: 60_000 });
  t.ok(segments >= 3, `${segments} segments`);
  const state = (await app.request('GET', '/api/v3/process/channel/state')).body;
  t.equal(state.exec, 'running');
  t.equal(state.playlist.in.name, 'channel', 'state.playlist shows the channel');
  t.ok(state.playlist.in.played >= 1);
});
