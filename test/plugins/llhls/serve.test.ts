import t from 'tap';
import type { Test } from 'tap';
import { checkPlaylist, checkUpdate } from '../../../plugins/llhls/check.ts';
import { streamTableRef, type StreamTable } from '../../../sdk/index.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg, play, startRtmpApp } from '../rtmp/helpers.ts';
import { ffmpeg as srtFfmpeg, srtUrl, startSrtApp } from '../srt/srt-helpers.ts';
import { command, state, waitState } from '../../core/process/helpers.ts';
import { ownFfmpegs, rtmpProcess } from '../../core/process/ondemand/helpers.ts';

/*
 * LL-HLS of the stream table as clients get it (plugins/llhls): a stream published over RTMP
 * (or SRT) by ffmpeg is packaged on the first playlist request and served by the core's file door
 * at /hls/<stream>/: every playlist answer passes the RFC 8216bis checker, a blocking reload
 * answers once the asked part exists, the hinted part waits for itself, bad asks get 400 with an
 * Error body, ffmpeg plays both playlists, the end of the publish ends the playlist, and the
 * packager stops reading once nobody asks.
 */
const LLHLS = { enable: true, target_duration_seconds: 1, part_target_ms: 200, idle_seconds: 60 };
const SOURCE = ['-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
  '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '25', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '32k'];

interface Got { status: number; headers: Headers; text: string; bytes: Buffer }

async function get(url: string, headers: Record<string, string> = {}): Promise<Got> {
  const res = await fetch(url, { headers });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, text: bytes.toString(), bytes };
}

/** The playlist once it has `segments` complete segments; checked by the RFC checker. */
async function playlist(t: Test, url: string, segments = 1): Promise<string> {
  const text: string = await waitFor(async () => {
    const r = await get(url);
    return r.status === 200 && (r.text.match(/^#EXTINF/gm)?.length ?? 0) >= segments ? r.text : undefined;
  }, { timeout: 30_000, what: `${segments} segments in ${url}` });
  t.same(checkPlaylist(text), [], 'the playlist passes the RFC checker');
  return text;
}

const hintOf = (text: string) => /#EXT-X-PRELOAD-HINT:TYPE=PART,URI="([^"]+)"/.exec(text)?.[1];

t.test('RTMP in, LL-HLS out: blocking reloads, the hinted part, bad asks, plain HLS, the end', async (t) => {
  const app = await startRtmpApp(t, {}, { llhls: LLHLS });
  const base = `${app.url}/hls/live/cam`;
  const none = await get(`${base}/index.m3u8`);
  t.equal(none.status, 404, 'nothing published: 404');
  t.equal(JSON.parse(none.text).code, 404, 'with an Error body');

  const pub = ffmpeg(t, ['-loglevel', 'warning', ...SOURCE, '-t', '14', '-f', 'flv', `${app.base}/live/cam`]);
  const first = await playlist(t, `${base}/index.m3u8`, 2);
  t.match(first, /#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL=6,PART-HOLD-BACK=0.6/, 'server control');
  t.match(first, /#EXT-X-PART-INF:PART-TARGET=0.2\n/, 'the part target');
  t.match(first, /#EXT-X-PROGRAM-DATE-TIME:/, 'program date time');
  const head = await get(`${base}/index.m3u8`, { origin: 'https://player.example' });
  t.equal(head.headers.get('content-type'), 'application/vnd.apple.mpegurl');
  t.equal(head.headers.get('cache-control'), 'no-cache', 'a live playlist is not cached');
  t.ok(head.headers.get('access-control-allow-origin'), 'CORS for players elsewhere');

  const init = await get(`${base}/${/#EXT-X-MAP:URI="([^"]+)"/.exec(first)![1]}`);
  t.equal(init.status, 200, 'the init section');
  t.equal(init.headers.get('content-type'), 'video/mp4');
  t.match(init.headers.get('cache-control'), /immutable/, 'immutable for a CDN');
  const ranged = await get(`${base}/${/#EXT-X-MAP:URI="([^"]+)"/.exec(first)![1]}`, { range: 'bytes=0-7' });
  t.equal(ranged.status, 206, 'ranges');
  t.equal(ranged.bytes.subarray(4, 8).toString(), 'ftyp');

  // a blocking reload for the hinted part: answered once it exists, with it in the playlist
  const hint = hintOf(first)!;
  const [, msn, part] = /-(\d+)\.(\d+)\.m4s$/.exec(hint)!;
  const blocked = await get(`${base}/index.m3u8?_HLS_msn=${msn}&_HLS_part=${part}`);
  t.equal(blocked.status, 200, 'the blocking reload is answered');
  t.ok(blocked.text.includes(`URI="${hint}"`) && !blocked.text.includes(`PRELOAD-HINT:TYPE=PART,URI="${hint}"`), `with part ${msn}.${part} in it`);
  t.same(checkPlaylist(blocked.text), [], 'valid');
  t.same(checkUpdate(first, blocked.text), [], 'a valid update of the first');
  t.match(blocked.headers.get('cache-control'), /public, max-age=\d+/, 'a blocking answer may be cached');

  // the preload hint, asked before it exists
  const next = hintOf(blocked.text)!;
  const hinted = await get(`${base}/${next}`);
  t.equal(hinted.status, 200, 'the hinted part, once made');
  t.equal(hinted.headers.get('content-type'), 'video/iso.segment');
  t.ok(hinted.bytes.includes(Buffer.from('moof')), 'a movie fragment');

  for (const [query, code] of [
    ['_HLS_msn=abc', 'LLHLS_MALFORMED_ASK'], ['_HLS_part=1', 'LLHLS_PART_WITHOUT_MSN'],
    ['_HLS_msn=999999', 'LLHLS_TOO_FAR_AHEAD'], [`_HLS_msn=${msn}&_HLS_part=99`, 'LLHLS_TOO_FAR_AHEAD'], ['_HLS_skip=NO', 'LLHLS_BAD_SKIP'],
  ] as const) {
    const bad = await get(`${base}/index.m3u8?${query}`);
    t.equal(bad.status, 400, `${query}: 400 (${code})`);
    t.match(JSON.parse(bad.text), { code: 400, message: String, details: Array }, 'an Error body');
  }
  t.equal((await get(`${base}/nothing.m4s`)).status, 404, 'an unknown file: 404');

  const plain = await get(`${base}/plain.m3u8`);
  t.equal(plain.status, 200, 'the plain playlist');
  t.notMatch(plain.text, /EXT-X-PART|PRELOAD-HINT|SERVER-CONTROL/, 'without LL tags');
  t.same(checkPlaylist(plain.text), [], 'valid');
  for (const name of ['index.m3u8', 'plain.m3u8']) {
    const p = play(t, `${base}/${name}`, { frames: 25, timeoutMs: 30_000 });
    t.equal(await p.done, 0, `ffmpeg plays ${name} (${p.stderr().slice(-300)})`);
    t.ok(p.frames().length >= 25, `frames decoded (${p.frames().length})`);
  }

  const long = await playlist(t, `${base}/index.m3u8`, 8);
  const delta = await get(`${base}/index.m3u8?_HLS_skip=YES`);
  t.match(delta.text, /#EXT-X-SKIP:SKIPPED-SEGMENTS=\d+/, 'a delta update skips the old segments');
  t.same(checkPlaylist(delta.text), [], 'valid');
  t.ok(delta.text.length < long.length, 'and is shorter');

  t.equal(await pub.done, 0, 'published');
  let seen: Got | undefined;
  const ended: string = await waitFor(async () => {
    const r = seen = await get(`${base}/index.m3u8`);
    return r.text.includes('#EXT-X-ENDLIST') ? r.text : undefined;
  }, { timeout: 20_000, what: 'the end' }).catch((err: Error) => { throw new Error(`${err.message}; last answer ${seen?.status}: ${seen?.text.slice(-400)}`); });
  t.same(checkPlaylist(ended), [], 'the ended playlist is valid');
  const lastPart = [...ended.matchAll(/#EXT-X-PART:[^\n]*URI="([^"]+)"/g)].at(-1)![1]!;
  t.equal((await get(`${base}/${lastPart}`)).status, 200, 'its parts stay until nobody asks');
  t.equal((await get(`${base}/${next}`)).status, 404, 'but not those of segments long gone from the part window');
});

t.test('packaging starts on the first request and stops when nobody asks', async (t) => {
  const app = await startRtmpApp(t, {}, { llhls: { ...LLHLS, idle_seconds: 5 } });
  const streams = app.service.app.kernel.services.resolve(streamTableRef) as StreamTable;
  const readers = () => streams.get('live/idle')?.readers.filter((r) => r.peer.protocol === 'llhls').length ?? -1;
  ffmpeg(t, ['-loglevel', 'warning', ...SOURCE, '-t', '40', '-f', 'flv', `${app.base}/live/idle`]);
  await waitFor(() => streams.get('live/idle'), { timeout: 20_000, what: 'the publish' });
  t.equal(readers(), 0, 'published, not packaged');
  await playlist(t, `${app.url}/hls/live/idle/index.m3u8`);
  t.equal(readers(), 1, 'packaged once asked');
  await waitFor(() => readers() === 0, { timeout: 20_000, what: 'the packager to stop' });
  t.pass('stopped after idle_seconds without a request');
  await playlist(t, `${app.url}/hls/live/idle/index.m3u8`);
  t.equal(readers(), 1, 'a new request packages again');
  t.equal((await app.request('PUT', '/api/v3/fs/llhls/live/idle/x.m4s', { body: 'x' })).status, 403, 'the filesystem is read-only');
});

t.test('a token guards the playlists; a part needs no token, only its random name', async (t) => {
  const app = await startRtmpApp(t, {}, { llhls: { ...LLHLS, token: 'tok' } });
  ffmpeg(t, ['-loglevel', 'warning', ...SOURCE, '-t', '30', '-f', 'flv', `${app.base}/live/tok`]);
  const base = `${app.url}/hls/live/tok`;
  await waitFor(async () => (await get(`${base}/index.m3u8?token=tok`)).status === 200, { timeout: 20_000, what: 'the playlist' });
  for (const q of ['', '?token=', '?token=wrong', '?token=tokx']) {
    const r = await get(`${base}/index.m3u8${q}`);
    t.equal(r.status, 401, `index.m3u8${q}: 401`);
    t.equal(JSON.parse(r.text).code, 401, 'with an Error body');
  }
  t.equal((await get(`${base}/plain.m3u8`)).status, 401, 'the plain playlist too');
  const text = (await get(`${base}/index.m3u8?token=tok`)).text;
  const part = /#EXT-X-PART:[^\n]*URI="([^"]+)"/.exec(text)![1]!;
  t.match(part, /^[0-9a-f]{16}-\d+\.\d+\.m4s$/, 'random 64-bit names');
  t.equal((await get(`${base}/${part}`)).status, 200, 'a part by its name');
});

t.test('a playlist request starts an on-demand process and waits for its stream; its budget applies', async (t) => {
  const app = await startRtmpApp(t, {}, { llhls: LLHLS, encoder: { ondemand: { max_starts_per_client: 1 } } });
  for (const id of ['od1', 'od2']) {
    t.equal((await app.request('POST', '/api/v3/process', { body: rtmpProcess(id, `live/${id}`) })).status, 200);
    await waitState(app, id, (s) => s.ondemand?.waiting === true, 'waiting');
  }
  t.same(ownFfmpegs('live/od1'), [], 'nothing runs before a viewer asks');
  const first = await get(`${app.url}/hls/live/od1/index.m3u8`);
  t.equal(first.status, 200, 'the first request is answered once the process publishes');
  t.same(checkPlaylist(first.text), [], 'with a valid playlist');
  t.match(first.text, /#EXTINF/, 'and a segment');
  const over = await get(`${app.url}/hls/live/od2/index.m3u8`);
  t.equal(over.status, 404, 'this client\'s one start is spent: a second stream is not started');
  t.equal((await state(app, 'od2')).ondemand.waiting, true, 'it still waits');
});

t.test('an on-demand stream that stopped while packaged starts again on the next playlist request', async (t) => {
  const app = await startRtmpApp(t, {}, { llhls: LLHLS });
  t.equal((await app.request('POST', '/api/v3/process', { body: rtmpProcess('od3', 'live/od3') })).status, 200);
  await waitState(app, 'od3', (s) => s.ondemand?.waiting === true, 'waiting');
  t.equal((await get(`${app.url}/hls/live/od3/index.m3u8`)).status, 200, 'started by the first request');
  await waitState(app, 'od3', (s) => s.exec === 'running', 'running');
  // stopped and armed again (the packager still holds the ended stream): it waits for a demand
  t.equal(await command(app, 'od3', 'stop'), 200);
  t.equal(await command(app, 'od3', 'start'), 200);
  await waitState(app, 'od3', (s) => s.ondemand?.waiting === true && s.exec === 'finished', 'waiting again', 30_000);
  const again = await get(`${app.url}/hls/live/od3/index.m3u8`);
  t.equal(again.status, 200);
  t.notMatch(again.text, /#EXT-X-ENDLIST/, 'a live playlist again, not the ended one');
  t.match(again.text, /#EXTINF/, 'with a segment of the new run');
  t.equal((await state(app, 'od3')).exec, 'running', 'the request started the process again');
});

t.test('SRT in, LL-HLS out', async (t) => {
  const app = await startSrtApp(t, { token: '' }, { llhls: LLHLS });
  srtFfmpeg(t, [...SOURCE, '-t', '30', '-f', 'mpegts', srtUrl(app.srtPort, 'cam,mode:publish')]);
  const text = await playlist(t, `${app.url}/hls/cam/index.m3u8`, 2);
  t.match(text, /#EXT-X-PART:DURATION=[\d.]+,URI="[^"]+",INDEPENDENT=YES/, 'parts from an MPEG-TS publish');
  const p = play(t, `${app.url}/hls/cam/index.m3u8`, { frames: 25, timeoutMs: 30_000 });
  t.equal(await p.done, 0, `ffmpeg plays it (${p.stderr().slice(-300)})`);
  t.ok(p.frames().length >= 25, `frames decoded (${p.frames().length})`);
});
