import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { checkPlaylist } from '../../../plugins/llhls/check.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg, startRtmpApp } from '../rtmp/helpers.ts';
import { withFixedLadder } from './fixtures/fixed-ladder.ts';

/*
 * The multivariant playlist (`master.m3u8`) of a stream with an adaptive-bitrate ladder and of one
 * without (issue 48.2), from the LL-HLS packagers: every rendition with its codecs, size and bit
 * rates, the media playlists' rendition reports of their siblings. The ladder is a stand-in of the
 * ladders plugin (`fixtures/fixed-ladder.ts`): its two renditions are published by the test.
 */
const fixedLadder = fileURLToPath(new URL('./fixtures/fixed-ladder.ts', import.meta.url));
const LLHLS = { enable: true, target_duration_seconds: 1, part_target_ms: 200, idle_seconds: 60, token: 'tk' };

function source(size: string, kbps: number): string[] {
  return ['-loglevel', 'warning', '-re', '-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=25`, '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '25', '-b:v', `${kbps}k`, '-pix_fmt', 'yuv420p',
    '-c:a', 'aac', '-b:a', '64k', '-t', '40', '-f', 'flv'];
}

async function get(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
}

t.test('master.m3u8: the ladder\'s renditions, or the stream itself; rendition reports', async (t) => {
  const app = await startRtmpApp(t, {}, { llhls: LLHLS, plugins: withFixedLadder(fixedLadder) });
  const hls = `${app.url}/hls`;
  t.equal((await get(`${hls}/live/src/master.m3u8?token=tk`)).status, 404, 'nothing published: 404');
  t.equal((await get(`${hls}/live/src/master.m3u8`)).status, 401, 'the token guards it as every playlist');
  ffmpeg(t, [...source('320x180', 400), `${app.base}/live/src/hi`]);
  ffmpeg(t, [...source('160x90', 150), `${app.base}/live/src/lo`]);
  ffmpeg(t, [...source('160x90', 150), `${app.base}/live/other`]);
  await waitFor(() => app.rtmp.channels().length === 3 || undefined, { what: 'three publishers', timeout: 20_000 });

  const master = await get(`${hls}/live/src/master.m3u8?token=tk`);
  t.equal(master.status, 200);
  const lines = master.text.trim().split('\n');
  t.same(lines.slice(0, 3), ['#EXTM3U', '#EXT-X-VERSION:6', '#EXT-X-INDEPENDENT-SEGMENTS']);
  const inf = lines.filter((l) => l.startsWith('#EXT-X-STREAM-INF:'));
  t.equal(inf.length, 2, 'one variant per rendition');
  t.match(inf[0], /CODECS="avc1\.[0-9a-f]{6},mp4a\.40\.2",RESOLUTION=320x180,FRAME-RATE=25\.000/, 'codecs and size from the rendition\'s own tracks');
  t.match(inf[1], /RESOLUTION=160x90/);
  const bw = inf.map((l) => Number(/BANDWIDTH=(\d+)/.exec(l)![1]));
  t.ok(bw[0]! >= 464_000 * 1.1 && bw[1]! >= 214_000 * 1.1, `BANDWIDTH at least the nominal rate (${bw.join(', ')})`);
  t.same(lines.filter((l) => !l.startsWith('#')), ['hi/index.m3u8?token=tk', 'lo/index.m3u8?token=tk'], 'relative URIs carrying the token');

  const hi = await get(`${hls}/live/src/hi/index.m3u8?token=tk`);
  t.equal(hi.status, 200);
  t.match(hi.text, /\n#EXT-X-RENDITION-REPORT:URI="\.\.\/lo\/index\.m3u8",LAST-MSN=\d+,LAST-PART=\d+\n$/, 'a report of the sibling, last');
  t.same(checkPlaylist(hi.text), [], 'the playlist with its report passes the checker');
  t.notMatch((await get(`${hls}/live/other/index.m3u8?token=tk`)).text, /RENDITION-REPORT/, 'no ladder: no report');

  const single = await get(`${hls}/live/other/master.m3u8?token=tk`);
  t.match(single.text, /#EXT-X-STREAM-INF:BANDWIDTH=\d+,AVERAGE-BANDWIDTH=\d+,CODECS="avc1\.[0-9a-f]{6},mp4a\.40\.2",RESOLUTION=160x90\nindex\.m3u8\?token=tk\n$/,
    'a stream without a ladder lists itself');

  // ffprobe reads the multivariant playlist and every variant behind it
  // (not spawnSync: the service runs in this process)
  const probe = await promisify(execFile)('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type,width,height', '-of', 'csv=p=0',
    `${hls}/live/src/master.m3u8?token=tk`], { encoding: 'utf8', timeout: 60_000 });
  const sizes = probe.stdout.split('\n').filter((l) => l.startsWith('video')).map((l) => l.split(',').slice(1).join('x'));
  t.same([...new Set(sizes)].sort(), ['160x90', '320x180'], 'ffprobe finds both renditions');
});
