import t from 'tap';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
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

/** Asks `url` over fresh connections until both threads handled a request of it (the door's copy there, or main); returns every status seen. */
async function overEveryThread(app: Awaited<ReturnType<typeof startApp>>, url: string): Promise<Set<number>> {
  const seen = new Set<number>();
  const before = await app.service.threads.stats();
  await waitFor(async () => {
    for (let n = 0; n < 6; n++) seen.add((await fresh(url)).status);
    const now = await app.service.threads.stats();
    return now.length === 2 && now.every((s, i) => s.served + s.forwarded > before[i]!.served + before[i]!.forwarded);
  }, { timeout: 30_000, what: `both threads handling ${url}` });
  return seen;
}

t.test('with a limit of 1 viewer, a second viewer is refused whichever thread it reaches (memfs and disk)', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2, { sessions: { enable: true, ip_ignorelist: [], session_timeout_sec: 60, max_sessions: 1 } }) });
  const list = `#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:1.0,\nseg0.ts\n`;
  t.equal((await fresh(`${app.url}/memfs/v/p.m3u8`, { method: 'PUT', body: list })).status, 201);
  await writeFile(join(app.dir, 'disk', 'p.m3u8'), list);
  // the first viewer: the master playlist names its session, fetching that registers it
  const own = (await fresh(`${app.url}/memfs/v/p.m3u8`)).body.toString().split('\n').find((l) => l.includes('session='))!;
  t.equal((await fresh(`${app.url}/memfs/v/${own}`)).status, 200);
  for (const path of ['/memfs/v/p.m3u8', '/p.m3u8']) t.same([...await overEveryThread(app, `${app.url}${path}`)], [509], `${path}: refused on every listener`);
  // the admitted viewer (it holds the one place) keeps playing, on every listener too
  t.same([...await overEveryThread(app, `${app.url}/memfs/v/${own}`)], [200]);
});

t.test('the HTTP session counts the bytes of thread sockets, once (the forwarded hop is not counted again)', async (t) => {
  const app = await startApp(t, { config });
  const size = 200_000;
  t.equal((await fresh(`${app.url}/memfs/h/x.ts`, { method: 'PUT', body: Buffer.alloc(size, 1) })).status, 201);
  const http = async () => ((await active(app, 'http'))[0]?.bytes_tx ?? 0) as number;
  // counted once a second: settle what came before
  let before = await http();
  await waitFor(async () => { const b = await http(); const same = b - before < 20_000; before = b; return same; }, { interval: 1_200, what: 'quiet HTTP session' });
  // segments (threads answer them) and the same bytes through the API (threads forward it to main); the
  // kernel spreads new connections over main and the threads as it likes: asked until each thread took both
  let n = 0;
  let stats: Awaited<ReturnType<typeof app.service.threads.stats>> = [];
  while (n < 200) {
    for (let k = 0; k < 4; k++, n++) {
      if ((await fresh(`${app.url}/memfs/h/x.ts`)).body.length !== size) t.fail('a short segment');
      if ((await fresh(`${app.url}/api/v3/fs/mem/h/x.ts`)).body.length !== size) t.fail('a short API answer');
    }
    stats = await app.service.threads.stats();
    if (n >= 12 && stats.every((s) => s.served > 0 && s.forwarded > 0)) break;
  }
  t.ok(stats.every((s) => s.served > 0 && s.forwarded > 0), `threads answered and forwarded (${JSON.stringify(stats)}, ${n} of each)`);
  const sent = 2 * n * size;
  const after = await waitFor(async () => { const b = await http(); return b - before >= sent ? b : undefined; }, { timeout: 20_000, what: 'every byte in the HTTP session' });
  // headers and the polls themselves are small; a forwarded hop counted twice would add about a third of `sent`
  t.ok(after - before < sent + 150_000, `counted once (${after - before} for ${sent})`);
});
