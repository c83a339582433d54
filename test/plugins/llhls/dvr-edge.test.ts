import t, { type Test } from 'tap';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { checkPlaylist, checkUpdate } from '../../../plugins/llhls/check.ts';
import { parsePlaylist } from '../../../plugins/llhls/check-parse.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg, play, startRtmpApp } from '../rtmp/helpers.ts';
import { playDvrFromStart } from './hlsjs-page.ts';

/*
 * The DVR playlist's live edge from the packager (issue 47.4): a stream recorded in 1 s segments and
 * packaged as LL-HLS (1 s segments, a 10 s window): `dvr.m3u8` lists the recording up to where the
 * packager's archive begins, then the packager's CMAF segments up to its newest complete one; each
 * answer keeps the RFC's rules and only appends and removes at the start; a segment the packager let
 * go is served from the recording's filesystem, the same bytes; the archive goes with the packager.
 */
const SOURCE = ['-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
  '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '25', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '32k'];

const endOf = (text: string): number => {
  const p = parsePlaylist(text);
  let at = 0;
  for (const line of text.split('\n')) {
    const m = /^#EXT-X-PROGRAM-DATE-TIME:(\S+)/.exec(line);
    if (m) at = Date.parse(m[1]!);
  }
  // the last date plus the segments after it
  const lines = text.split('\n');
  const lastDate = lines.map((l, i) => (l.startsWith('#EXT-X-PROGRAM-DATE-TIME:') ? i : -1)).filter((i) => i >= 0).at(-1)!;
  let sum = 0;
  for (const l of lines.slice(lastDate)) if (l.startsWith('#EXTINF:')) sum += Number(/#EXTINF:([\d.]+)/.exec(l)![1]);
  return p.segments.length > 0 ? at + sum * 1000 : 0;
};

t.test('the DVR playlist ends at the packager\'s newest segment; what it let go is read from the recording', async (t) => {
  const app = await startRtmpApp(t, {}, {
    recordings: { enable: true },
    llhls: { enable: true, target_duration_seconds: 1, part_target_ms: 200, window_seconds: 10, idle_seconds: 5, dvr_window_seconds: 120 },
  });
  t.equal((await app.request('PUT', '/api/v3/recordings/cam', { body: { stream: 'live/cam', segment_seconds: 1 } })).status, 201);
  const pub = ffmpeg(t, ['-loglevel', 'warning', ...SOURCE, '-t', '75', '-f', 'flv', `${app.base}/live/cam`], 120_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/recordings/cam')).body.segments >= 8, { timeout: 40_000, interval: 500, what: '8 recorded segments' });

  // an archive a stopped service left behind (its index died with it): deleted when one begins
  const stale = join(app.dir, 'disk', 'recordings', 'cam', 'cmaf-00000000000000aa', '00000000000000aa-3.m4s');
  mkdirSync(dirname(stale), { recursive: true });
  writeFileSync(stale, 'left behind');

  const url = `${app.url}/hls/live/cam/dvr.m3u8`;
  const first = await (await fetch(url)).text();
  t.same(checkPlaylist(first), [], 'valid');
  t.match(first, /^#EXT-X-MAP:URI="rec-\d+-init\.mp4"\n(#EXT-X-PROGRAM-DATE-TIME:\S+\n)?#EXTINF:[\d.]+,\nrec-\d+\.m4s$/m, 'the recorded part first, as CMAF under its init section');
  await recordedAsCmaf(t, app.url, first);
  t.match(first, /#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI="[0-9a-f]{16}-init\d+\.mp4"/, 'then a discontinuity and the packager\'s init section');
  const archived = /^([0-9a-f]{16})-(\d+)\.m4s$/m.exec(first);
  t.ok(archived, 'then the packager\'s segments');
  await waitFor(() => !existsSync(stale), { what: 'the archive left behind deleted' });
  const epoch = archived![1]!;

  // answers over 14 s: each valid, each an update of the one before; the edge a segment or two behind
  let before = first;
  let edgeLag = Infinity;
  for (let i = 0; i < 14; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    const text = await (await fetch(url)).text();
    t.same(checkPlaylist(text), [], `answer ${i}: valid`);
    t.same(checkUpdate(before, text), [], `answer ${i}: an update of the one before`);
    edgeLag = Math.min(edgeLag, Date.now() - endOf(text));
    before = text;
  }
  // a segment recorded after the archive began is never listed: its CMAF name is not served (nor remuxed)
  const vod = (await app.request('GET', '/api/v3/recordings/cam/playlist.m3u8')).text;
  const newest = [...vod.matchAll(/(\d+)\.ts$/gm)].at(-1)![1];
  t.equal((await fetch(`${app.url}/hls/live/cam/rec-${newest}.m4s`)).status, 404, 'a recorded segment the window does not list: 404');
  t.ok(edgeLag < 3000, `the live edge ${edgeLag} ms behind the clock (the recording's alone: its newest stored segment)`);

  // the first archived segment: long out of the packager's 10 s window, read from the recording's filesystem
  const name = `${epoch}-${archived![2]}.m4s`;
  const index = await (await fetch(`${app.url}/hls/live/cam/index.m3u8`)).text();
  t.notMatch(index, new RegExp(name.replace('.', '\\.')), 'the packager no longer lists it');
  const seg = await fetch(`${app.url}/hls/live/cam/${name}`);
  const bytes = Buffer.from(await seg.arrayBuffer());
  t.equal(seg.status, 200, `GET ${name}: from the archive`);
  t.ok(bytes.length > 1000, `its bytes (${bytes.length})`);
  t.equal(seg.headers.get('cache-control'), 'public, max-age=31536000, immutable', 'immutable, as the packager answers it');
  const dir = join(app.dir, 'disk', 'recordings', 'cam', `cmaf-${epoch}`);
  t.ok(existsSync(join(dir, name)), 'stored beside the recording');

  // a player at the live edge of the DVR playlist
  const edge = play(t, url, { frames: 50, timeoutMs: 30_000 });
  t.equal(await edge.done, 0, `ffmpeg plays the DVR playlist's live edge (${edge.stderr().slice(-300)})`);
  t.ok(edge.frames().length >= 50, `frames decoded (${edge.frames().length})`);

  // ffmpeg from the window's start: the recorded part, then across the boundary into the archive
  const recorded = (before.match(/^rec-\d+\.m4s$/gm) ?? []).length;
  const back = play(t, url, { frames: (recorded + 3) * 25, extra: ['-live_start_index', '0'], timeoutMs: 40_000 });
  t.equal(await back.done, 0, `ffmpeg plays from the window's start (${back.stderr().slice(-300)})`);
  t.ok(back.frames().length >= (recorded + 3) * 25, `past the ${recorded} recorded segments into the archive (${back.frames().length} frames)`);

  // hls.js from the start of the window: the recorded part, the discontinuity, then the archive (both CMAF)
  const hs = await playDvrFromStart(t, app.url, url, recorded + 3);
  if (hs) t.ok(hs.currentTime > recorded + 3, `hls.js played from the recorded part into the archive (${hs.currentTime.toFixed(1)} s, ${recorded} recorded segments first, ${hs.frames} frames)`);

  t.equal(await pub.done, 0, 'published');
  const ended = await waitFor(async () => { const x = await (await fetch(url)).text(); return /#EXT-X-ENDLIST\n$/.test(x) ? x : undefined; }, { what: 'the DVR playlist ended' });
  t.same(checkPlaylist(ended), [], 'ended, valid');
  // nothing asks for the stream's files: the packager stops and its archive goes
  await waitFor(() => !existsSync(dir) || readdirSync(dir).length === 0, { timeout: 30_000, what: 'the archive deleted with the packager' });
  t.pass('the archive went with the packager');
});

/** The recorded part's first segment and its init section, remuxed when asked; a segment the recording does not have: 404. */
async function recordedAsCmaf(t: Test, base: string, first: string): Promise<void> {
  const rec = /^rec-\d+\.m4s$/m.exec(first)![0];
  const recInit = /URI="(rec-\d+-init\.mp4)"/.exec(first)![1]!;
  const [recSeg, recMap] = await Promise.all([rec, recInit].map(async (n) => fetch(`${base}/hls/live/cam/${n}`)));
  t.equal(recSeg!.status, 200, `GET ${rec}: a recorded segment remuxed`);
  t.equal(recSeg!.headers.get('content-type'), 'video/iso.segment');
  t.equal(recSeg!.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.equal(Buffer.from(await recSeg!.arrayBuffer()).toString('latin1', 4, 8), 'moof', 'a movie fragment');
  t.equal(recMap!.status, 200, `GET ${recInit}`);
  t.equal(Buffer.from(await recMap!.arrayBuffer()).toString('latin1', 4, 8), 'ftyp', 'an init section');
  t.equal((await fetch(`${base}/hls/live/cam/rec-1.m4s`)).status, 404, 'a segment the recording does not have: 404');
}
