import t from 'tap';
import { request } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { startRtmpCli, publish, play } from './helpers.ts';
import { runFuzz } from './fuzz-run.ts';
import { serveOnce } from './attack-kit.ts';

/*
 * The RTMP fuzz suite (issue 27.2): seeded generators of malformed input (fuzz-gen.ts) against
 * the real service in its own process, while a real ffmpeg publisher and player use it.
 *
 *   FUZZ_CASES=100000 npx tap test/plugins/rtmp/fuzz.test.ts     more cases
 *   FUZZ_SEED=7 FUZZ_FROM=1200 FUZZ_CASES=1 ...                   replay one case
 */

const CASES = Number(process.env.FUZZ_CASES ?? 10000);
const SEED = Number(process.env.FUZZ_SEED ?? 27);
const FROM = Number(process.env.FUZZ_FROM ?? 0);

t.test(`${CASES} malformed RTMP sessions (seed ${SEED}): no crash, every connection closed, a publisher and a player served throughout`, async (t) => {
  const app = await startRtmpCli(t);
  // as long as the run may take: about 2 ms a case on a busy 2-core machine, and a margin
  const seconds = 120 + Math.ceil(CASES / 200);
  const pub = publish(t, `${app.base}/live/legit`, { seconds });
  await waitFor(async () => (await request(app.url, 'GET', '/api/v3/rtmp')).body.some((c: { name: string }) => c.name === '/live/legit'), { what: 'the publisher listed' });
  const player = play(t, `${app.base}/live/legit`, { timeoutMs: seconds * 1000 });
  await waitFor(() => player.frames().length > 3, { what: 'the player running' });

  const seen: Array<{ at: number; frames: number }> = [];
  const sampler = setInterval(() => seen.push({ at: Date.now(), frames: player.frames().length }), 100);
  t.teardown(() => clearInterval(sampler));
  const start = Date.now();
  // the fuzz connects from 127.0.0.4: its connections count against their own per-address cap
  const run = await runFuzz({ port: app.port, seed: SEED, from: FROM, cases: CASES, lanes: 16, localAddress: '127.0.0.4', stop: () => app.child.exitCode !== null });
  const end = Date.now();
  t.equal(app.child.exitCode, null, run.stoppedAt === undefined ? 'the service lives' : `the service died before case ${run.stoppedAt} (replay: FUZZ_SEED=${SEED} FUZZ_FROM=<a case before it>)`);
  if (app.child.exitCode !== null) return;
  const after = player.frames().length;
  const flowing = await waitFor(() => player.frames().length > after, { what: 'a frame after the run' }).catch(() => false);
  clearInterval(sampler);
  if (!flowing) {
    // what happened to the legitimate clients, for the report
    t.comment((await app.log()).filter((l) => l.includes('legit')).slice(-10).join('\n'));
    t.comment(player.stderr().slice(-1500).replace(/\r/g, '\n'));
  }
  t.ok(flowing, 'the player receives frames after the run');
  t.equal(run.cases, CASES, 'every case sent');
  t.equal(run.lingering, 0, 'the server closed every connection its client ended');
  t.same(Object.keys(run.byGenerator).sort(), ['amf', 'chunkHeaders', 'chunkSize', 'handshake', 'mutated', 'sequence', 'structural'], 'every generator ran');
  t.comment(`${run.cases} cases in ${((end - start) / 1000).toFixed(1)} s: ${JSON.stringify(run.byGenerator)}`);

  // throughout: new frames in every window of the run (windows of 3 s or more; the source is 10 fps)
  const framesAt = (at: number) => seen.find((s) => s.at >= at)?.frames ?? player.frames().length;
  const windows = Math.max(1, Math.min(8, Math.floor((end - start) / 3000)));
  for (let w = 0; w < windows; w++) {
    const from = start + (end - start) * w / windows;
    const to = start + (end - start) * (w + 1) / windows;
    t.ok(framesAt(to) > framesAt(from), `the player received frames in window ${w + 1}/${windows} of the run (${framesAt(from)} -> ${framesAt(to)})`);
  }
  t.equal(player.child.exitCode, null, 'the ffmpeg player runs on');
  t.equal(pub.child.exitCode, null, 'the ffmpeg publisher runs on');
  t.ok((await serveOnce(app.port, 'after-fuzz')).ok, 'a new publisher and player are served after the run');
});
