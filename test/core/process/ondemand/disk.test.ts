import t from 'tap';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startApp, type TestApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { ffmpegPids, state, waitState } from '../helpers.ts';
import { LAVFI_IN, probeStreams } from './helpers.ts';

/*
 * The HLS demand on the disk filesystem (issue 34): an on-demand process writing HLS into a
 * folder of the disk (`{diskfs}/live/...`), read through the disk mount `/`. The waiting
 * playlist is written there, a viewer's request starts ffmpeg, whose playlist replaces it within
 * 4 s; its segments are served; it stops after the viewer left and the waiting playlist is back.
 */

const WAITING = '## on demand: waiting';

function diskProcess(id: string, name: string): Record<string, unknown> {
  return {
    id,
    input: [LAVFI_IN],
    output: [{
      id: 'out',
      address: `{diskfs}/live/${name}.m3u8`,
      options: [
        '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '25', '-f', 'hls', '-hls_time', '1',
        '-hls_list_size', '4', '-hls_flags', 'delete_segments', '-hls_segment_filename', `{diskfs}/live/${name}_%d.ts`,
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

t.test('a viewer of a playlist on the disk starts an on-demand process; it stops after the viewer left', async (t) => {
  const app = await startApp(t);
  await mkdir(join(app.dir, 'disk', 'live'), { recursive: true });
  const r = await app.request('POST', '/api/v3/process', { body: diskProcess('cam7', 'cam7') });
  t.equal(r.status, 200, 'added');
  await waitState(app, 'cam7', (s) => s.ondemand?.waiting === true, 'waiting');
  t.same(ffmpegPids('cam7.m3u8'), [], 'no ffmpeg runs before a viewer asks');
  // the first request asks: the time to ffmpeg's playlist counts from it
  const t0 = performance.now();
  const first = await waitFor(async () => {
    const g = await get(app, '/live/cam7.m3u8');
    return g.status === 200 && g.text.includes(WAITING) ? g.text : undefined;
  }, { what: 'the waiting playlist on the disk', timeout: 15_000 });
  t.match(first, /cam7\.ondemand-slate\.ts/, 'it lists the slate clip');
  t.equal((await get(app, '/live/cam7.ondemand-slate.ts')).status, 200, 'the slate clip is served from the disk');
  // poll like a player until ffmpeg's own playlist is served
  const playlist = await waitFor(async () => {
    const g = await get(app, '/live/cam7.m3u8');
    return g.status === 200 && !g.text.includes(WAITING) && g.text.includes('#EXTINF') ? g.text : undefined;
  }, { what: "ffmpeg's playlist", timeout: 20_000, interval: 1000 });
  const ms = performance.now() - t0;
  t.ok(ms < 4000, `ffmpeg's playlist within 4 s of asking (${Math.round(ms)} ms)`);
  t.match((await state(app, 'cam7')).ondemand, { waiting: false, started_by: 'hls' }, 'started by the HLS viewer');
  const seg = playlist.split('\n').find((l) => l.endsWith('.ts'))!;
  t.match(seg, /^cam7_\d+\.ts$/);
  t.ok((await probeStreams(`${app.url}/live/${seg}`)).includes('video'), 'ffprobe reads a segment through the disk mount');
  // segment requests keep it running: they count as demand
  await get(app, `/live/${seg}`);
  await waitState(app, 'cam7', (s) => s.ondemand?.waiting === true && s.exec === 'finished', 'waiting again', 25_000);
  await waitFor(() => ffmpegPids('cam7.m3u8').length === 0, { what: 'ffmpeg gone' });
  await waitFor(async () => ((await get(app, '/live/cam7.m3u8')).text.includes(WAITING) ? true : undefined), { what: 'the waiting playlist back' });
  t.pass('the waiting playlist is back on the disk');
});
