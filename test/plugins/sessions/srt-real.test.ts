import t from 'tap';
import { waitFor } from '../../helpers/wait.ts';
import { startSrtApp, ffmpeg, srtUrl, SOURCE, TOKEN } from '../srt/srt-helpers.ts';
import { active, summary } from './helpers.ts';

/*
 * The sessions plugin counts a real SRT publisher and player (real ffmpeg on both ends) through the
 * ingest hooks alone. Loopback is counted because the ignore list is empty.
 */
t.test('a real SRT publisher and player are srt sessions, closed into the history when they leave', async (t) => {
  const app = await startSrtApp(t, {}, { sessions: { enable: true, ip_ignorelist: [] } });
  const srt = app.srtPort;

  const pub = ffmpeg(t, [...SOURCE, '-f', 'mpegts', srtUrl(srt, `counted,mode:publish,token:${TOKEN}`)]);
  await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body?.publisher?.counted !== undefined, { timeout: 30_000, what: 'publisher' });
  const player = ffmpeg(t, ['-i', srtUrl(srt, `counted,token:${encodeURIComponent(TOKEN)}`), '-f', 'null', '-']);

  const list = await waitFor(async () => {
    const l = await active(app, 'srt');
    return l.length === 2 && l.every((s: any) => s.bytes_rx > 0 || s.bytes_tx > 0) ? l : undefined;
  }, { what: 'publisher and player with traffic', timeout: 30_000 });
  t.same(list.map((s: any) => s.local).sort(), ['play:counted', 'publish:counted']);
  t.ok(list.every((s: any) => s.reference === 'counted'), 'reference is the resource');

  pub.kill();
  await player.done;
  await waitFor(async () => (await active(app, 'srt')).length === 0, { what: 'both sessions closed', timeout: 30_000 });
  t.equal((await summary(app, 'srt')).summary.sessions, 2, 'both went into the history');
});
