import t from 'tap';
import { request } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg, srtUrl, SOURCE, TOKEN } from './srt-helpers.ts';
import { knownSrtSettings, player, startSrtCli } from './fuzz-service.ts';
import { runFuzz, sendCase } from './fuzz-run.ts';
import { GENERATORS } from './fuzz-gen.ts';
import { CRASH_INPUTS, conclusionCase } from './fuzz-crashes.ts';

/*
 * The SRT fuzz suite (issue 27.2): seeded generators of malformed SRT datagrams and streamids
 * (fuzz-gen.ts, from a recorded ffmpeg session: fixtures/record-session.ts) against the real
 * service in its own process, while a real ffmpeg publisher and player use it.
 *
 *   FUZZ_CASES=100000 npx tap test/plugins/srt/fuzz.test.ts      more cases
 *   FUZZ_SEED=7 FUZZ_FROM=1200 FUZZ_CASES=1 ...                    replay one case
 *   FUZZ_GENERATORS=control,data ...                                only these generators (other cases)
 */

const CASES = Number(process.env.FUZZ_CASES ?? 3000);
/**
 * The service's token in the main run: the fuzz's handshakes carry the suite's TOKEN, so they are a
 * stranger's (refused in the handshake, as deep as a stranger gets). A client that holds the token
 * can still crash libsrt 1.5.1 with a forged ACK (fuzz-crashes.ts): that ends the SRT host
 * process, not the service (host.test.ts); run with FUZZ_INSIDER=1 to fuzz as such a client.
 */
const SERVICE_TOKEN = process.env.FUZZ_INSIDER ? TOKEN : 'only-the-legitimate-clients-know-this';
const SEED = Number(process.env.FUZZ_SEED ?? 27);
const FROM = Number(process.env.FUZZ_FROM ?? 0);
const ONLY = process.env.FUZZ_GENERATORS ? process.env.FUZZ_GENERATORS.split(',') : undefined;

t.test(`${CASES} malformed SRT sessions (seed ${SEED}): no crash, no SRT host fault, a publisher and a player served throughout`, async (t) => {
  // no refusal delay (when this version has one): the fuzz waits for refusals
  const app = await startSrtCli(t, { token: SERVICE_TOKEN, ...knownSrtSettings({ fail_delay_ms: 0 }) });
  const dead = () => app.child.exitCode !== null || app.child.signalCode !== null;
  const srt = async () => (await request(app.url, 'GET', '/api/v3/srt')).body as { publisher: Record<string, number>; subscriber: Record<string, number[]> };
  // as long as the run may take: about 10 ms a case on a busy 2-core machine, and a margin
  const seconds = 120 + Math.ceil(CASES / 100);
  const pub = ffmpeg(t, [...SOURCE, '-f', 'mpegts', srtUrl(app.srtPort, `legit,mode:publish,token:${SERVICE_TOKEN}`)], seconds * 1000);
  const pubId = await waitFor(async () => (await srt()).publisher.legit, { timeout: 30_000, what: 'the publisher listed' });
  const legitUrl = srtUrl(app.srtPort, `legit,token:${encodeURIComponent(SERVICE_TOKEN)}`);
  const play = player(t, legitUrl, { timeoutMs: seconds * 1000 });
  await waitFor(() => play.frames() > 3, { timeout: 30_000, what: 'the player running' });
  const legit = [pubId, ...(await srt()).subscriber.legit ?? []];

  const seen: Array<{ at: number; frames: number }> = [];
  const sampler = setInterval(() => seen.push({ at: Date.now(), frames: play.frames() }), 100);
  t.teardown(() => clearInterval(sampler));
  const start = Date.now();
  // the datagrams come from 127.0.0.4: their connections count against their own address
  const run = await runFuzz({ port: app.srtPort, seed: SEED, from: FROM, cases: CASES, lanes: 16, localAddress: '127.0.0.4', legit: () => legit, only: ONLY, stop: dead });
  const end = Date.now();
  clearInterval(sampler);
  const replay = `replay: FUZZ_SEED=${SEED} FUZZ_FROM=<case> FUZZ_CASES=1${ONLY ? ` FUZZ_GENERATORS=${ONLY.join(',')}` : ''}`;
  t.notOk(dead(), run.stoppedAt === undefined ? 'the service lives' : `the service died (${app.child.signalCode ?? app.child.exitCode}) before case ${run.stoppedAt}, cases in flight ${run.inFlight.join(' ')} (${replay})`);
  if (dead()) return;
  t.same(run.unanswered, [], `the service answered every valid induction (${replay})`);
  t.equal(run.cases, CASES, 'every case sent');
  // a replay of a few cases runs only their generators
  if (CASES >= 300) t.same(Object.keys(run.byGenerator).sort(), ONLY ? GENERATORS.filter((g) => ONLY.includes(g)) : GENERATORS, 'every generator ran');
  t.comment(`${run.cases} cases in ${((end - start) / 1000).toFixed(1)} s (${Math.round(run.cases / ((end - start) / 1000))}/s), ${run.accepted} accepted, ${run.refused} refused: ${JSON.stringify(run.byGenerator)}`);

  t.equal((await request(app.url, 'GET', '/api')).status, 200, 'the HTTP API answers');
  const faults = (await app.log()).filter((l) => l.includes('SRT host process ended'));
  t.same(faults, [], 'the SRT host process never faulted (libsrt did not crash)');
  t.equal((await srt()).publisher.legit, pubId, 'the legitimate publisher is listed, the same connection');
  // throughout: new frames in every window of the run (windows of 3 s or more, none in a shorter run; the source is 10 fps)
  const framesAt = (at: number) => seen.find((s) => s.at >= at)?.frames ?? play.frames();
  const windows = Math.min(8, Math.floor((end - start) / 3000));
  for (let w = 0; w < windows; w++) {
    const from = start + (end - start) * w / windows;
    const to = start + (end - start) * (w + 1) / windows;
    t.ok(framesAt(to) > framesAt(from), `the player received frames in window ${w + 1}/${windows} of the run (${framesAt(from)} -> ${framesAt(to)})`);
  }
  const after = play.frames();
  const flowing = await waitFor(() => play.frames() > after, { what: 'a frame after the run' }).catch(() => false);
  if (!flowing) t.comment(play.stderr());
  t.ok(flowing, 'the player receives frames after the run');
  t.equal(play.exitCode(), null, 'the ffmpeg player runs on');
  t.equal(pub.code, null, 'the ffmpeg publisher runs on');
  const fresh = player(t, legitUrl, { frames: 5, timeoutMs: 30_000 });
  await fresh.done;
  if (fresh.frames() < 5) t.comment(fresh.stderr());
  t.ok(fresh.frames() >= 5, `a new player reads frames after the run (${fresh.frames()})`);
});

t.test('inputs the fuzz found fatal to libsrt 1.5.1 (fuzz-crashes.ts): the kernel filter drops them, libsrt never sees them', async (t) => {
  for (const input of CRASH_INPUTS) {
    const app = await startSrtCli(t, knownSrtSettings({ fail_delay_ms: 0 }));
    const dead = () => app.child.exitCode !== null || app.child.signalCode !== null;
    const to = { port: app.srtPort, localAddress: '127.0.0.4' };
    await sendCase(to, input.case);
    // valid publishers after it: a corrupted heap shows at a later allocation
    for (let k = 0; k < 10 && !dead(); k++) await sendCase(to, conclusionCase(`after-${k}`));
    await waitFor(dead, { timeout: 2000, what: 'a crash' }).catch(() => false);
    t.notOk(dead(), `${input.name}: the service lives${dead() ? ` (it died: ${app.child.signalCode ?? app.child.exitCode})` : ''}`);
    if (!dead()) t.equal((await request(app.url, 'GET', '/api/v3/srt')).status, 200, `${input.name}: then the API answers`);
    await new Promise((r) => setTimeout(r, 500));
    t.same((await app.log()).filter((l) => l.includes('SRT host process ended')), [], `${input.name}: the SRT host process did not fault`);
  }
});
