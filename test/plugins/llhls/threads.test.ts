import t from 'tap';
import { checkPlaylist } from '../../../plugins/llhls/check.ts';
import { waitFor } from '../../helpers/wait.ts';
import { fresh } from '../../core/door/threads/helpers.ts';
import { ffmpeg, startRtmpApp } from '../rtmp/helpers.ts';

/*
 * LL-HLS with serving threads (issue 47.2): the parts, segments and init of a packaged stream are
 * fed to the threads' copies of the door, so every thread answers them itself (with their own
 * immutable Cache-Control); playlists (blocking reloads) and the hinted part before it exists are
 * answered from any listener (by the threads' view once main fed it: thread-views.test.ts), and
 * every answer is the same wherever it was made.
 */
const SOURCE = ['-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
  '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '25', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '32k'];

t.test('every serving thread answers parts and segments itself; playlists and the hint from any listener', async (t) => {
  const app = await startRtmpApp(t, {}, { http: { threads: 2 }, sessions: { enable: false }, llhls: { enable: true, target_duration_seconds: 1, part_target_ms: 200 } });
  ffmpeg(t, ['-loglevel', 'warning', ...SOURCE, '-t', '60', '-f', 'flv', `${app.base}/live/cam`], 90_000);
  const base = `${app.url}/hls/live/cam`;
  const text = await waitFor(async () => {
    const r = await fresh(`${base}/index.m3u8`);
    return r.status === 200 && (r.body.toString().match(/^#EXTINF/gm)?.length ?? 0) >= 3 ? r.body.toString() : undefined;
  }, { timeout: 30_000, what: 'three segments' });
  t.same(checkPlaylist(text), [], 'the playlist (through any listener) is valid');
  const files = [...text.matchAll(/URI="([^"]+\.m4s)"/g)].map((m) => m[1]!).slice(0, 6);
  files.push(/#EXT-X-MAP:URI="([^"]+)"/.exec(text)![1]!, /^([0-9a-f]{16}-\d+\.m4s)$/m.exec(text)![1]!);
  const served = async () => (await app.service.threads.stats()).map((s) => s.served);
  const before = await served();
  let wrong = 0;
  await waitFor(async () => {
    for (const f of files) {
      const r = await fresh(`${base}/${f}`);
      if (r.status !== 200 || !/immutable/.test(String(r.headers['cache-control'])) || r.body.length === 0) wrong++;
    }
    const now = await served();
    return now.length === 2 && now.every((n, i) => n > before[i]!);
  }, { timeout: 30_000, what: 'both threads answering parts' });
  t.equal(wrong, 0, 'every answer, on main or a thread, is the file with its immutable Cache-Control');
  const first = (await fresh(`${base}/${files[0]}`)).body;
  for (let i = 0; i < 8; i++) t.ok((await fresh(`${base}/${files[0]}`)).body.equals(first), 'the same bytes from every listener');

  // a blocking reload and the hinted part, asked through every listener, are held until ready
  for (let i = 0; i < 6; i++) {
    const now = (await fresh(`${base}/index.m3u8`)).body.toString();
    const hint = /PRELOAD-HINT:TYPE=PART,URI="([^"]+)"/.exec(now)![1]!;
    const [, msn, part] = /-(\d+)\.(\d+)\.m4s$/.exec(hint)!;
    const [blocked, hinted] = await Promise.all([fresh(`${base}/index.m3u8?_HLS_msn=${msn}&_HLS_part=${part}`), fresh(`${base}/${hint}`)]);
    t.equal(blocked.status, 200, `blocking reload ${msn}.${part}`);
    t.ok(blocked.body.toString().includes(`URI="${hint}"`), 'with the asked part');
    t.equal(hinted.status, 200, 'the hinted part once made');
  }
});
