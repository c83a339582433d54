import t from 'tap';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { fresh, memNames, runFfmpeg, threadsConfig } from './helpers.ts';

t.test('ffmpeg\'s live HLS (chunked PUTs, a connection each) is written and read through the threads: no 404 for a listed segment', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2) });
  const playlist = `${app.url}/memfs/live/s.m3u8`;
  const before = await app.service.threads.stats();
  runFfmpeg(t, [
    '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10',
    '-f', 'hls', '-hls_time', '1', '-hls_list_size', '4', '-method', 'PUT', '-http_persistent', '0', playlist,
  ]);
  // nothing reads /memfs yet (the file list is an API request): what the threads served are ffmpeg's uploads
  await waitFor(async () => {
    const now = await app.service.threads.stats();
    return now.every((s, i) => s.served > before[i]!.served) && (await memNames(app)).filter((n) => n.endsWith('.ts')).length >= 3;
  }, { timeout: 60_000, interval: 200, what: 'each thread receiving ffmpeg\'s uploads' });
  t.ok((await memNames(app)).includes('/live/s.m3u8'), 'the playlist is stored');

  const player = runFfmpeg(t, ['-loglevel', 'warning', '-i', playlist, '-t', '4', '-f', 'null', '-']);
  // a viewer of our own: each playlist and each segment it lists over a fresh connection (any listener)
  const missed: string[] = [];
  const seen = new Set<string>();
  await waitFor(async () => {
    const list = await fresh(playlist);
    if (list.status !== 200) missed.push(`playlist ${list.status}`);
    for (const s of list.body.toString().split('\n').filter((l) => l.endsWith('.ts'))) {
      const r = await fresh(`${app.url}/memfs/live/${s}`);
      if (r.status !== 200 || r.body.length === 0) missed.push(`${s} ${r.status}`);
      seen.add(s);
    }
    return seen.size >= 6;
  }, { timeout: 60_000, interval: 200, what: 'six segments' });
  t.same(missed, [], 'every listed segment was there');
  t.equal(await player.exited, 0, 'the player played');
  t.notMatch(player.stderr(), /404|Not Found/i, 'the player never got a 404');
});
