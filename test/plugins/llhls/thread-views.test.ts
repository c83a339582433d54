import t, { type Test } from 'tap';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { checkPlaylist } from '../../../plugins/llhls/check.ts';
import { streamTableRef, type StreamTable } from '../../../sdk/index.ts';
import type { TestApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { comparable, type Answer } from '../../core/door/threads/helpers.ts';
import { ffmpeg, startRtmpApp } from '../rtmp/helpers.ts';
import { playPolicyRef, type PlayPolicy } from './fixtures/play-policy.ts';

/*
 * LL-HLS playlists answered by the serving threads themselves (issue 47.2): with two threads,
 * each thread's view of `/hls` (plugins/llhls/view.ts) serves an admitted viewer's playlists and
 * holds its blocking reloads until the state main feeds it is ready, with the bytes, ETag and
 * headers main answers; a viewer the prePlay taps refuse, a wrong token and the bad asks get the
 * same answers through every listener; and the packager keeps running while only a thread
 * answers. Each check uses a keep-alive connection that a known listener accepted (main, or a
 * thread), so who answered is known, not guessed.
 */
const policyPlugin = fileURLToPath(new URL('./fixtures/play-policy.ts', import.meta.url));
const SOURCE = ['-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25', '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency',
  '-g', '25', '-pix_fmt', 'yuv420p'];
const TOKEN = 'tok';

/** A keep-alive connection, and the listener that accepted it: `main`, or a thread's index. */
interface Conn { where: 'main' | number; get(path: string, headers?: Record<string, string>): Promise<Answer> }

function connection(t: Test, url: string): Omit<Conn, 'where'> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const { hostname, port } = new URL(url);
  return {
    get: (path, headers = {}) => new Promise((resolve, reject) => {
      const req = request({ host: hostname, port: Number(port), path, agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), headers: res.headers }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    }),
  };
}

/** One connection accepted by main and one by each thread (opened until each listener took one). */
async function connections(t: Test, app: TestApp, probe: string): Promise<{ main: Conn; threads: Conn[] }> {
  const found = new Map<'main' | number, Conn>();
  await waitFor(async () => {
    const c = connection(t, app.url);
    const before = await app.service.threads.stats();
    // a file a thread answers from its copy: its served count tells who took the connection
    t.equal((await c.get(probe)).status, 200);
    const after = await app.service.threads.stats();
    const i = after.findIndex((s, n) => s.served > before[n]!.served);
    const where = i < 0 ? 'main' : i;
    if (!found.has(where)) found.set(where, { where, ...c });
    return found.size === 3 || undefined;
  }, { timeout: 30_000, what: 'a connection on main and on each thread' });
  return { main: found.get('main')!, threads: [found.get(0)!, found.get(1)!] };
}

const served = async (app: TestApp) => (await app.service.threads.stats()).reduce((n, s) => n + s.served, 0);
/** The preload hint's segment and part numbers. */
const hintOf = (text: string) => /#EXT-X-PRELOAD-HINT:TYPE=PART,URI="[^"]*-(\d+)\.(\d+)\.m4s"/.exec(text)!;

t.test('the threads answer playlists and hold blocking reloads themselves, as main answers them', async (t) => {
  const app = await startRtmpApp(t, {}, {
    http: { threads: 2 }, sessions: { enable: false }, plugins: ['*', policyPlugin],
    llhls: { enable: true, target_duration_seconds: 1, part_target_ms: 200, idle_seconds: 5, token: TOKEN },
  });
  const policy = app.service.app.kernel.services.resolve(playPolicyRef) as PlayPolicy;
  const streams = app.service.app.kernel.services.resolve(streamTableRef) as StreamTable;
  ffmpeg(t, ['-loglevel', 'warning', ...SOURCE, '-t', '80', '-f', 'flv', `${app.base}/live/cam`], 120_000);
  ffmpeg(t, ['-loglevel', 'warning', ...SOURCE, '-t', '80', '-f', 'flv', `${app.base}/live/private`], 120_000);
  const index = `/hls/live/cam/index.m3u8?token=${TOKEN}`;
  const first = await waitFor(async () => {
    const r = await fetch(`${app.url}${index}`);
    const text = await r.text();
    return r.status === 200 && (text.match(/^#EXTINF/gm)?.length ?? 0) >= 2 ? text : undefined;
  }, { timeout: 30_000, what: 'two segments' });
  const init = /#EXT-X-MAP:URI="([^"]+)"/.exec(first)![1]!;
  const { main, threads } = await connections(t, app, `/hls/live/cam/${init}`);
  const viewer = () => policy.events.filter((e) => e.hook === 'prePlay' && e.peer.stream === '/live/cam').length;
  t.equal(viewer(), 1, 'the viewer was admitted once, on main');

  await t.test('an admitted viewer\'s playlists, answered by each thread', async (t) => {
    for (const c of threads) {
      // the first ask of a thread wants the stream's state; main answers until it is fed
      await waitFor(async () => {
        const before = await served(app);
        const r = await c.get(index);
        return r.status === 200 && (await served(app)) > before || undefined;
      }, { timeout: 10_000, what: `thread ${c.where} answering the playlist` });
      for (const path of [index, `/hls/live/cam/plain.m3u8?token=${TOKEN}`, `${index}&_HLS_skip=YES`]) {
        const before = await served(app);
        const r = await c.get(path);
        t.equal(r.status, 200, `${path.slice(14)}: 200`);
        t.same(checkPlaylist(r.body.toString()), [], 'a valid playlist');
        t.equal(await served(app), before + 1, 'answered by the thread');
      }
    }
    t.equal(viewer(), 1, 'no prePlay again: the threads serve the viewer main admitted');
  });

  await t.test('blocking reloads held by a thread answer with main\'s bytes, ETag and headers', async (t) => {
    let same = 0;
    let rounds = 0;
    await waitFor(async () => {
      rounds++;
      const c = threads[rounds % 2]!;
      const [, msn, part] = hintOf((await c.get(index)).body.toString());
      const ask = `${index}&_HLS_msn=${msn}&_HLS_part=${part}`;
      const before = await served(app);
      const [here, there] = await Promise.all([c.get(ask), main.get(ask)]);
      t.equal(here.status, 200, `${msn}.${part}: held and answered by thread ${c.where}`);
      t.equal(await served(app), before + 1, 'the thread held it');
      // both are answered when part `part` appears; a later part before main's turn would be another version
      if (here.headers.etag === there.headers.etag) {
        t.equal(comparable(here), comparable(there), 'the same answer as main\'s: status, body, every header');
        same++;
      }
      return same >= 4 || undefined;
    }, { timeout: 30_000, what: 'four reloads answered alike' });
    t.comment(`${same} of ${rounds} rounds answered at the same version`);
  });

  await t.test('bad asks, a wrong token and a refused viewer: the same answers through every listener', async (t) => {
    const through = async (path: string, headers?: Record<string, string>) => Promise.all([main, ...threads].map((c) => c.get(path, headers)));
    const digits = (a: Answer) => comparable({ ...a, body: Buffer.from(a.body.toString().replace(/\d+/g, '#')), headers: { ...a.headers, 'content-length': '' } });
    const [, msn] = hintOf((await main.get(index)).body.toString());
    for (const [query, code] of [
      ['_HLS_msn=abc', 'LLHLS_MALFORMED_ASK'], ['_HLS_part=1', 'LLHLS_PART_WITHOUT_MSN'], ['_HLS_msn=999999', 'LLHLS_TOO_FAR_AHEAD'],
      [`_HLS_msn=${msn}&_HLS_part=99`, 'LLHLS_TOO_FAR_AHEAD'], ['_HLS_skip=NO', 'LLHLS_BAD_SKIP'],
    ] as const) {
      const before = await served(app);
      const [m, ...th] = await through(`${index}&${query}`);
      t.equal(m!.status, 400, `${query}: 400 (${code})`);
      for (const a of th) t.equal(digits(a), digits(m!), 'the same from the thread (the numbers in the details move on)');
      t.equal(await served(app), before + 2, 'both threads answered it themselves');
    }
    for (const path of ['/hls/live/cam/index.m3u8', '/hls/live/cam/index.m3u8?token=nope', `/hls/live/cam/plain.m3u8?token=no`]) {
      const [m, ...th] = await through(path);
      t.equal(m!.status, 401, `${path.slice(14)}: 401`);
      t.match(JSON.parse(m!.body.toString()), { code: 401 });
      for (const a of th) t.equal(comparable(a), comparable(m!), 'the same from each thread');
    }
    for (const file of ['index.m3u8', 'plain.m3u8']) {
      const [m, ...th] = await through(`/hls/live/private/${file}?token=${TOKEN}`);
      t.equal(m!.status, 403, `a viewer of live/private, ${file}: refused by the tap`);
      t.match(JSON.parse(m!.body.toString()), { code: 403, details: ['private stream'] });
      for (const a of th) t.equal(comparable(a), comparable(m!), 'refused through each thread too');
    }
    const proxied = await threads[0]!.get(index, { 'x-forwarded-for': '192.0.2.7' });
    t.equal(proxied.status, 200, 'a client behind a proxy header: main answers (the thread cannot tell who it is)');
  });

  await t.test('the packager and the viewer stay while only a thread answers', async (t) => {
    const c = threads[0]!;
    const epoch = /URI="([0-9a-f]{16})-init/.exec((await c.get(index)).body.toString())![1];
    const reader = () => streams.get('live/cam')?.readers.filter((r) => r.peer.protocol === 'llhls').length;
    const before = await served(app);
    const seen = viewer();
    let asks = 0;
    // more than twice idle_seconds (and the viewers' keep) of blocking reloads through the thread alone
    const until = Date.now() + 12_000;
    while (Date.now() < until) {
      const [, msn, part] = hintOf((await c.get(index)).body.toString());
      const r = await c.get(`${index}&_HLS_msn=${msn}&_HLS_part=${part}`);
      t.equal(r.status, 200, 'a blocking reload through the thread');
      asks += 2;
      t.equal(/URI="([0-9a-f]{16})-init/.exec(r.body.toString())?.[1], epoch, 'the same packager', { diagnostic: false });
    }
    t.equal(await served(app), before + asks, `every one of ${asks} playlists answered by the thread`);
    t.equal(reader(), 1, 'the packager still reads the stream');
    t.equal(viewer(), seen, 'the viewer is still kept: no prePlay again');
  });
});
