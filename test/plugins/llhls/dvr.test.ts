import t from 'tap';
import { checkPlaylist } from '../../../plugins/llhls/check.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg, play, startRtmpApp } from '../rtmp/helpers.ts';
import { playDvrFromStart } from './hlsjs-page.ts';

/*
 * Recorded time as HLS (issue 47.4): a stream recorded by the `recordings` plugin (1 s segments on
 * the disk filesystem) plays as a VOD playlist of any recorded range
 * (`/api/v3/recordings/{name}/playlist.m3u8`), and as the DVR playlist of the LL-HLS plugin
 * (`/hls/<stream>/dvr.m3u8`): a sliding window back into the recording (over a minute here) that a player starts at its
 * oldest segment (ffmpeg, and hls.js in Chromium over a minute behind the live edge), ended once the
 * recording stops. The VOD playlist names the files by their public
 * URLs; the DVR request packages the live stream, so its recorded part is remuxed to CMAF (`dvr-edge`).
 */
const SOURCE = ['-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
  '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '25', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '32k'];

t.test('a recorded range as a VOD playlist, the DVR window as a live one', async (t) => {
  const app = await startRtmpApp(t, {}, { recordings: { enable: true }, llhls: { enable: true, token: 'tok', dvr_window_seconds: 120 } });
  t.equal((await app.request('PUT', '/api/v3/recordings/cam', { body: { stream: 'live/cam', segment_seconds: 1 } })).status, 201);
  t.equal((await fetch(`${app.url}/hls/live/cam/dvr.m3u8?token=tok`)).status, 404, 'nothing recorded yet: 404');
  const pub = ffmpeg(t, ['-loglevel', 'warning', ...SOURCE, '-t', '72', '-f', 'flv', `${app.base}/live/cam`], 120_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/recordings/cam')).body.segments >= 64, { timeout: 100_000, interval: 1000, what: '64 segments' });

  const dvr = await fetch(`${app.url}/hls/live/cam/dvr.m3u8?token=tok`);
  const live = await dvr.text();
  t.equal(dvr.status, 200, 'the DVR playlist while recording');
  t.equal(dvr.headers.get('content-type'), 'application/vnd.apple.mpegurl');
  t.same(checkPlaylist(live), [], 'valid');
  t.notMatch(live, /#EXT-X-ENDLIST/, 'live: not ended');
  t.match(live, /#EXT-X-PROGRAM-DATE-TIME:/, 'seekable by clock time');
  // the DVR request packages the live stream: the recorded part as CMAF, ahead of the packager's archive
  t.match(live, /^rec-\d+\.m4s$/m, 'recorded segments remuxed to CMAF');
  const oldest = Date.parse(/#EXT-X-PROGRAM-DATE-TIME:(\S+)/.exec(live)![1]!);
  t.ok(Date.now() - oldest >= 60_000, `the window reaches ${Math.round((Date.now() - oldest) / 1000)} s back (the test seeks back 60 s or more)`);
  t.equal((await fetch(`${app.url}/hls/live/cam/dvr.m3u8`)).status, 401, 'the token guards it');
  // a player that starts at the oldest segment of the window (a minute behind the live edge)
  const back = play(t, `${app.url}/hls/live/cam/dvr.m3u8?token=tok`, { frames: 150, extra: ['-live_start_index', '0'], timeoutMs: 30_000 });
  t.equal(await back.done, 0, `ffmpeg plays the DVR window from its start (${back.stderr().slice(-300)})`);
  t.ok(back.frames().length >= 150, `frames decoded (${back.frames().length})`);
  t.ok(back.keyFirst(), 'from a keyframe');
  // hls.js (Chromium) at the start of the window: it plays, a minute or more behind the live edge
  const hs = await playDvrFromStart(t, app.url, `${app.url}/hls/live/cam/dvr.m3u8?token=tok`, 3);
  if (hs) {
    t.ok(hs.frames > 50, `frames decoded (${hs.frames})`);
    t.ok(hs.latency >= 55, `hls.js plays ${hs.latency.toFixed(1)} s behind the live edge (seeked back a minute)`);
  }

  t.equal(await pub.done, 0, 'published');
  await waitFor(async () => { const r = (await app.request('GET', '/api/v3/recordings/cam')).body; return !r.recording && r.storing === 0; }, { what: 'the recording to stop' });
  const ended = await (await fetch(`${app.url}/hls/live/cam/dvr.m3u8?token=tok`)).text();
  t.match(ended, /#EXT-X-ENDLIST\n$/, 'ended once the recording stops');
  t.same(checkPlaylist(ended), [], 'valid');

  const rec = (await app.request('GET', '/api/v3/recordings/cam?start=0')).body;
  const span = rec.spans[0];
  const all = await app.request('GET', '/api/v3/recordings/cam/playlist.m3u8');
  t.equal(all.status, 200, 'the VOD playlist of the whole recording');
  t.match(all.text, /#EXT-X-PLAYLIST-TYPE:VOD\n/, 'VOD');
  t.same(checkPlaylist(all.text), [], 'valid');
  const vod = play(t, `${app.url}/api/v3/recordings/cam/playlist.m3u8`, { timeoutMs: 30_000 });
  t.equal(await vod.done, 0, `ffmpeg plays it (${vod.stderr().slice(-300)})`);
  t.ok(Math.abs(vod.frames().length - span.duration * 25) <= 30, `every recorded frame (${vod.frames().length} for ${span.duration} s)`);
  const start = span.start_ms + 4000;
  const part = await app.request('GET', `/api/v3/recordings/cam/playlist.m3u8?start=${start / 1000}&end=${(start + 3000) / 1000}`);
  const n = part.text.match(/^#EXTINF/gm)?.length ?? 0;
  t.ok(n >= 3 && n <= 5, `a range names the segments it overlaps (${n})`);
  t.equal((await app.request('GET', '/api/v3/recordings/cam/playlist.m3u8?start=1000&end=2000')).status, 404, 'nothing recorded then: 404');
  t.equal((await app.request('GET', '/api/v3/recordings/cam/playlist.m3u8?start=yesterday')).status, 400, 'a bad time: 400');
  t.equal((await app.request('GET', '/api/v3/recordings/nope/playlist.m3u8')).status, 404, 'an unknown recording: 404');
});
