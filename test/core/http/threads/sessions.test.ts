import t from 'tap';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { active, liveHls, player } from '../../../plugins/sessions/helpers.ts';
import { fresh, threadsConfig } from './helpers.ts';

const config = threadsConfig(2, { sessions: { enable: true, ip_ignorelist: [], session_timeout_sec: 3, max_sessions: 2 } });

t.test('a viewer\'s segments answered by threads count for its session, byte for byte', async (t) => {
  const app = await startApp(t, { config });
  const segment = Buffer.alloc(50_000, 0x47);
  const list = `#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:1.0,\nseg0.ts\n`;
  t.equal((await fresh(`${app.url}/memfs/v/seg0.ts`, { method: 'PUT', body: segment })).status, 201);
  t.equal((await fresh(`${app.url}/memfs/v/p.m3u8`, { method: 'PUT', body: list })).status, 201);
  // the master playlist names the viewer's session; its playlist tags the segment lines with it
  const master = (await fresh(`${app.url}/memfs/v/p.m3u8`)).body.toString();
  const own = master.split('\n').find((l) => l.includes('session='))!;
  const mine = (await fresh(`${app.url}/memfs/v/${own}`)).body.toString();
  const seg = mine.split('\n').find((l) => l.startsWith('seg0.ts'))!;
  t.match(seg, /session=/);
  const N = 30;
  // a generous bound for one response's header block
  const headers = 400;
  for (let n = 0; n < N; n++) t.equal((await fresh(`${app.url}/memfs/v/${seg}`)).body.length, segment.length);
  const stats = await app.service.threads.stats();
  t.ok(stats.every((s) => s.served > 0), `threads answered segments (${JSON.stringify(stats)})`);
  // reports reach main within a second: the session has every segment's bytes, counted once
  const session = await waitFor(async () => {
    const [s] = await active(app);
    return s && s.bytes_tx >= N * segment.length ? s : undefined;
  }, { timeout: 20_000, what: 'the session counting every segment' });
  t.ok(session.bytes_tx < N * (segment.length + headers) + 5_000, `not counted twice (${session.bytes_tx})`);
  t.equal((await active(app)).length, 1, 'one viewer, one session');
});

t.test('ffmpeg players through threads: one session each, a new viewer over the limit is refused on every listener', async (t) => {
  const app = await startApp(t, { config });
  await liveHls(app, 'live');
  const url = `${app.url}/memfs/live.m3u8`;
  player(t, url);
  player(t, url);
  await waitFor(async () => {
    const list = await active(app);
    // (ffmpeg asks segments with `Range: bytes=0-`: main answers those, and sessions count their
    // playlists only, with or without threads)
    return list.length === 2 && list.every((s) => s.bytes_tx > 0);
  }, { timeout: 30_000, what: 'two hls sessions' });
  const refused = new Set<number>();
  for (let n = 0; n < 12; n++) refused.add((await fresh(url)).status);
  t.same([...refused], [509]);
  t.equal((await active(app)).length, 2);
});
