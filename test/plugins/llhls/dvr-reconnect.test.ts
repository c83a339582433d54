import t from 'tap';
import { checkPlaylist, checkUpdate } from '../../../plugins/llhls/check.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg, play, startRtmpApp } from '../rtmp/helpers.ts';

/*
 * The DVR playlist across a publisher that leaves and comes back (issue 47.4): the recording goes
 * on, a new packager starts for the new publisher, and the DVR archive continues with it: a player
 * that reloads `dvr.m3u8` across the reconnect (without seeing the end, or after it) sees only
 * segments added at the end and removed at the start, never one renamed or renumbered (RFC 8216bis
 * 6.2.1). Before, the new packager made a new archive and the old one's time was listed again as
 * recorded segments under other numbers.
 */
const SOURCE = ['-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
  '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '25', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '32k'];

t.test('a publisher that comes back continues the DVR playlist: nothing renamed', async (t) => {
  const app = await startRtmpApp(t, {}, {
    recordings: { enable: true },
    llhls: { enable: true, target_duration_seconds: 1, part_target_ms: 200, window_seconds: 10, idle_seconds: 30, dvr_window_seconds: 120 },
  });
  t.equal((await app.request('PUT', '/api/v3/recordings/cam', { body: { stream: 'live/cam', segment_seconds: 1 } })).status, 201);
  const url = `${app.url}/hls/live/cam/dvr.m3u8`;
  const answers: string[] = [];
  let polling = true;
  const poll = (async () => {
    while (polling) {
      const r = await fetch(url).catch(() => undefined);
      if (r?.status === 200) answers.push(await r.text());
      await new Promise((res) => setTimeout(res, 250));
    }
  })();
  t.teardown(async () => { polling = false; await poll; });

  const first = ffmpeg(t, ['-loglevel', 'warning', ...SOURCE, '-t', '12', '-f', 'flv', `${app.base}/live/cam`], 60_000);
  await waitFor(() => answers.some((a) => /^[0-9a-f]{16}-\d+\.m4s$/m.test(a)), { timeout: 30_000, interval: 250, what: 'the packager archived in the DVR playlist' });
  t.equal(await first.done, 0, 'the first publisher published');
  const epochA = /^([0-9a-f]{16})-\d+\.m4s$/m.exec(answers.at(-1)!)![1]!;
  const second = ffmpeg(t, ['-loglevel', 'warning', ...SOURCE, '-t', '12', '-f', 'flv', `${app.base}/live/cam`], 60_000);
  const newEpoch = (a: string) => [...a.matchAll(/^([0-9a-f]{16})-\d+\.m4s$/gm)].some((m) => m[1] !== epochA);
  await waitFor(() => answers.filter(newEpoch).length >= 6, { timeout: 30_000, interval: 250, what: 'the second publisher\'s segments in the DVR playlist' });
  polling = false;
  await poll;

  const live = answers.filter((a) => !/#EXT-X-ENDLIST\n$/.test(a));
  t.ok(live.length > 20 && answers.length > live.length, `answers while live (${live.length}) and ended between (${answers.length - live.length})`);
  const bad: string[] = [];
  for (let i = 0; i < answers.length; i++) {
    bad.push(...checkPlaylist(answers[i]!).map((v) => `answer ${i}: ${v.rule}: ${v.message}`));
    // each live answer an update of the live one before it: what a player reloading across the reconnect sees
    if (i > 0 && live.includes(answers[i]!)) {
      const prev = answers.slice(0, i).reverse().find((a) => live.includes(a));
      if (prev) bad.push(...checkUpdate(prev, answers[i]!).map((v) => `answer ${i}: ${v.rule}: ${v.message}`));
    }
  }
  t.same(bad.slice(0, 10), [], 'every answer valid, each live one an update of the live one before');
  const last = answers.at(-1)!;
  t.match(last, new RegExp(`^${epochA}-0\\.m4s$`, 'm'), 'the first publisher\'s archived segments keep their names');
  t.match(last, new RegExp(`${epochA}-\\d+\\.m4s\\n#EXT-X-DISCONTINUITY\\n#EXT-X-MAP:URI="[0-9a-f]{16}-init\\d+\\.mp4"`), 'a discontinuity before the second publisher\'s');
  const name = new RegExp(`^${epochA}-1\\.m4s$`, 'm').exec(last)![0];
  const seg = await fetch(`${app.url}/hls/live/cam/${name}`);
  t.equal(seg.status, 200, `${name}: still served, from the archive`);
  await seg.arrayBuffer();

  // a player from the window's start: the first publisher's part, then across into the second's
  const back = play(t, url, { frames: 8 * 25, extra: ['-live_start_index', '0'], timeoutMs: 40_000 });
  t.equal(await back.done, 0, `ffmpeg plays across the reconnect (${back.stderr().slice(-300)})`);
  t.ok(back.frames().length >= 8 * 25, `frames (${back.frames().length})`);
  t.equal(await second.done, 0, 'the second publisher published');
});
