import t from 'tap';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { fresh, runFfmpeg as run, threadsConfig } from './helpers.ts';

t.test('a live HLS stream written by ffmpeg and read through the threads: no 404 for a listed segment', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2) });
  const playlist = `${app.url}/memfs/live/s.m3u8`;
  run(t, [
    '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10',
    '-f', 'hls', '-hls_time', '1', '-hls_list_size', '4', '-method', 'PUT', playlist,
  ]);
  await waitFor(async () => (await fresh(playlist)).status === 200, { timeout: 30_000, what: 'the first playlist' });
  const player = run(t, ['-loglevel', 'warning', '-i', playlist, '-t', '4', '-f', 'null', '-']);

  // a viewer of our own: each playlist and each segment it lists over a fresh connection (any listener)
  const missed: string[] = [];
  const seen = new Set<string>();
  await waitFor(async () => {
    const list = await fresh(playlist);
    if (list.status !== 200) missed.push(`playlist ${list.status}`);
    const segments = list.body.toString().split('\n').filter((l) => l.endsWith('.ts'));
    for (const s of segments) {
      const r = await fresh(`${app.url}/memfs/live/${s}`);
      if (r.status !== 200 || r.body.length === 0) missed.push(`${s} ${r.status}`);
      seen.add(s);
    }
    return seen.size >= 6;
  }, { timeout: 60_000, interval: 200, what: 'six segments' });
  t.same(missed, [], 'every listed segment was there');

  const code = await player.exited;
  t.equal(code, 0, 'the player played');
  t.notMatch(player.stderr(), /404|Not Found/i, 'the player never got a 404');
  const stats = await app.service.threads.stats();
  t.ok(stats.some((s) => s.served > 0), 'threads served the stream');
});
