import { fork, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { s3Entry, startS3, type S3Target } from '../../test/helpers/s3.ts';
import { loaderArgs } from '../runtime/loader.ts';
import {
  api, childPid, cpuSeconds, createProcess, makeSource, mean, median, playlist, probe, processState, rssMb, sleep, timedPut, uptime,
} from './measure.ts';
import type { BufferState } from './service.ts';

/**
 * HLS into S3 through the service against the same into memfs (issue 32, point 5), in one run:
 * one S3 server (the tests' `test/helpers/s3.ts`: @20minutes/s3rver, or S3_TEST_ENDPOINT), the
 * service in a child process (`service.ts`: disk-fs, memfs, one `storage.s3` entry `s3` at /s3),
 * and PROCS processes of the service, each remuxing one pre-encoded looping file (`-re
 * -stream_loop -1 -c copy`: 640x360 25 fps ~1 Mbit/s H.264 + AAC) to HLS (`-hls_time 2
 * -hls_list_size 6 -hls_flags delete_segments -method PUT`) at `{memfs}/r<n>/p<i>.m3u8` or
 * `{fs:s3}/r<n>/p<i>.m3u8`. Rounds alternate memfs, s3, ... (each: new processes, a warm-up,
 * the window, then the processes and their files deleted). Per round: the service's CPU (utime +
 * stime from /proc/<pid>/stat, its ffmpeg children excluded) and RSS (VmRSS each second: mean,
 * max), segments named by the playlists in the window, the S3 server's own CPU and RSS, the upload
 * buffer (largest), a 256 KiB PUT through the same mount every 2 s (ms), and correctness: every
 * process running without a restart, every playlist readable, one played by ffprobe through the
 * mount, every segment a playlist lists stored, the files left (about 8 per process with
 * delete_segments). PASS/FAIL on correctness only.
 *
 * Env: S3BENCH_ROUNDS (rounds per target, default 2), S3BENCH_WINDOW_S (default 60),
 * S3BENCH_WARM_S (default 20), S3BENCH_PROCS (default 10), S3BENCH_TAG (file name suffix).
 * Run: `node bench/s3/hls-s3-vs-memfs.ts`. Writes bench/results/s3-hls-<date>[-tag].md.
 */

const env = process.env;
const ROUNDS = Number(env.S3BENCH_ROUNDS ?? 2);
const WINDOW_S = Number(env.S3BENCH_WINDOW_S ?? 60);
const WARM_S = Number(env.S3BENCH_WARM_S ?? 20);
const PROCS = Number(env.S3BENCH_PROCS ?? 10);
const TAG = env.S3BENCH_TAG ? `-${env.S3BENCH_TAG}` : '';
const IDLE_S = 10;
const S3_NAME = 's3';
const PROBE_BODY = new Uint8Array(256 * 1024).fill(0x47);

type Target = 'memfs' | 's3';

interface Ctx { base: string; service: ChildProcess; pid: number; s3pid: number | undefined }

interface Round {
  target: Target; n: number; cpu: number; rssStart: number; rssMean: number; rssMax: number; segments: number;
  s3Cpu: number; s3RssMax: number; bufMaxBytes: number; bufMaxFiles: number; s3Healthy: boolean; putP50: number; putMax: number;
  running: number; restarted: number; playlistsOk: number; missing: number; probe: { ok: boolean; what: string }; files: number;
}

const where = (target: Target) => target === 'memfs'
  ? { place: '{memfs}', mount: '/memfs', fs: 'mem' }
  : { place: `{fs:${S3_NAME}}`, mount: `/${S3_NAME}`, fs: S3_NAME };

function ask<T>(child: ChildProcess, msg: string): Promise<T> {
  return new Promise((resolve) => { child.once('message', (m) => resolve(m as T)); child.send(msg); });
}

async function startService(dir: string, s3: S3Target): Promise<Ctx> {
  const entry = s3Entry(s3, { name: S3_NAME, mountpoint: `/${S3_NAME}` });
  const service = fork(fileURLToPath(new URL('./service.ts', import.meta.url)), [dir, JSON.stringify(entry)], { execArgv: loaderArgs() });
  const base = await new Promise<string>((resolve, reject) => {
    service.once('message', (m) => resolve((m as { url: string }).url));
    service.once('exit', (code) => reject(new Error(`service exited (${code})`)));
  });
  return { base, service, pid: service.pid!, s3pid: s3.local ? childPid('server.cjs') : undefined };
}

/** Samples each second until `ms` passed: service RSS, S3 server RSS, upload buffer; a timed PUT every 2 s. */
async function sample(ctx: Ctx, probeUrl: string, ms: number) {
  const rss: number[] = [];
  const s3Rss: number[] = [];
  const puts: number[] = [];
  let bufMaxBytes = 0;
  let bufMaxFiles = 0;
  let healthy = true;
  const end = Date.now() + ms;
  for (let i = 0; Date.now() < end; i++) {
    const tick = sleep(1000);
    rss.push(rssMb(ctx.pid));
    if (ctx.s3pid) s3Rss.push(rssMb(ctx.s3pid));
    const b = await ask<BufferState>(ctx.service, 'buffer');
    bufMaxBytes = Math.max(bufMaxBytes, b.bytes);
    bufMaxFiles = Math.max(bufMaxFiles, b.files);
    healthy &&= b.healthy;
    if (i % 2 === 0) puts.push(await timedPut(probeUrl, PROBE_BODY));
    await tick;
  }
  return { rss, s3Rss, puts, bufMaxBytes, bufMaxFiles, healthy };
}

/** Deletes the round's processes, then its files (after the ffmpegs are gone). */
async function cleanRound(ctx: Ctx, ids: string[], fsName: string, prefix: string): Promise<void> {
  for (const id of ids) await api(ctx.base, 'DELETE', `/api/v3/process/${id}`);
  await sleep(2000);
  const files = await api<{ name: string }[]>(ctx.base, 'GET', `/api/v3/fs/${fsName}?glob=${prefix}/*`);
  for (const f of files) await api(ctx.base, 'DELETE', `/api/v3/fs/${fsName}${f.name}`);
}

/** The end of a round: processes running, playlists readable, their segments stored, one played by ffprobe, files left. */
async function check(ctx: Ctx, ids: string[], playlists: string[], fsName: string, prefix: string) {
  const lists = await Promise.all(playlists.map(playlist));
  const states = await Promise.all(ids.map((id) => processState(ctx.base, id)));
  const files = await api<{ name: string }[]>(ctx.base, 'GET', `/api/v3/fs/${fsName}?glob=${prefix}/*`);
  const stored = new Set(files.map((f) => f.name));
  const played = await probe(playlists[0]!);
  return {
    named: lists.reduce((a, l) => a + l.named, 0), playlistsOk: lists.filter((l) => l.listed.length > 0).length,
    missing: lists.reduce((a, l) => a + l.listed.filter((seg) => !stored.has(`${prefix}/${seg}`)).length, 0),
    running: states.filter((x) => x.exec === 'running').length,
    restarted: states.filter((x) => x.runtime_seconds < WARM_S + WINDOW_S - 5).length,
    probe: played, files: files.filter((f) => f.name !== `${prefix}/probe.bin`).length,
  };
}

async function runRound(ctx: Ctx, target: Target, n: number): Promise<Round> {
  const w = where(target);
  const prefix = `/r${n}`;
  const rssStart = rssMb(ctx.pid);
  const ids = Array.from({ length: PROCS }, (_, i) => `r${n}p${i}`);
  for (const [i, id] of ids.entries()) await createProcess(ctx.base, id, `${w.place}${prefix}/p${i}.m3u8`);
  await sleep(WARM_S * 1000);
  const playlists = ids.map((_, i) => `${ctx.base}${w.mount}${prefix}/p${i}.m3u8`);
  const seg0 = (await Promise.all(playlists.map(playlist))).reduce((a, l) => a + l.named, 0);
  await ask<BufferState>(ctx.service, 'buffer');
  const c0 = cpuSeconds(ctx.pid);
  const s0 = ctx.s3pid ? cpuSeconds(ctx.s3pid) : 0;
  const t0 = performance.now();
  const s = await sample(ctx, `${ctx.base}${w.mount}${prefix}/probe.bin`, WINDOW_S * 1000);
  const secs = (performance.now() - t0) / 1000;
  const cpu = (cpuSeconds(ctx.pid) - c0) / secs * 100;
  const s3Cpu = ctx.s3pid ? (cpuSeconds(ctx.s3pid) - s0) / secs * 100 : NaN;
  const c = await check(ctx, ids, playlists, w.fs, prefix);
  await cleanRound(ctx, ids, w.fs, prefix);
  return {
    target, n, cpu, rssStart, rssMean: mean(s.rss), rssMax: Math.max(...s.rss), segments: c.named - seg0,
    s3Cpu, s3RssMax: s.s3Rss.length ? Math.max(...s.s3Rss) : NaN, bufMaxBytes: s.bufMaxBytes, bufMaxFiles: s.bufMaxFiles, s3Healthy: s.healthy,
    putP50: median(s.puts), putMax: Math.max(...s.puts), running: c.running, restarted: c.restarted, playlistsOk: c.playlistsOk,
    missing: c.missing, probe: c.probe, files: c.files,
  };
}

const f1 = (x: number) => Number.isFinite(x) ? x.toFixed(1) : 'n/a';
const okRound = (r: Round) => r.running === PROCS && r.restarted === 0 && r.playlistsOk === PROCS && r.missing === 0 && r.probe.ok && r.segments > 0;

function table(rounds: Round[]): string[] {
  const rows = rounds.map((r) => `| ${r.n} ${r.target} | ${f1(r.cpu)} | ${f1(r.rssStart)} | ${f1(r.rssMean)} | ${f1(r.rssMax)} | ${f1(r.rssMax - r.rssStart)} | ${r.segments} | ${f1(r.s3Cpu)} | ${f1(r.s3RssMax)} | `
    + `${r.target === 's3' ? `${(r.bufMaxBytes / 1024).toFixed(0)} KiB / ${r.bufMaxFiles}${r.s3Healthy ? '' : ', S3 unhealthy'}` : '-'} | ${f1(r.putP50)} / ${f1(r.putMax)} | `
    + `${r.running}/${PROCS}, ${r.restarted} | ${r.playlistsOk}/${PROCS}, ${r.missing} | ${r.probe.ok ? 'ok' : 'FAIL'} (${r.probe.what}) | ${r.files} | ${okRound(r) ? 'ok' : 'FAIL'} |`);
  return [
    '| round | service CPU % of a core | RSS at start MiB | RSS mean MiB | RSS max MiB | RSS rise (max - start) MiB | segments in window | S3 server CPU % | S3 server RSS max MiB '
      + '| S3 upload buffer max (KiB / files) | 256 KiB PUT p50 / max ms | running, restarted | playlists readable, segments missing | ffprobe p0 | files left | correct |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|---|', ...rows,
  ];
}

function summary(rounds: Round[]): string[] {
  const of = (t: Target) => rounds.filter((r) => r.target === t);
  const line = (t: Target) => {
    const rs = of(t);
    return `| ${t} | ${f1(mean(rs.map((r) => r.cpu)))} | ${f1(mean(rs.map((r) => r.rssMean)))} | ${f1(Math.max(...rs.map((r) => r.rssMax)))} | `
      + `${f1(mean(rs.map((r) => r.segments)))} | ${f1(mean(rs.map((r) => r.cpu * WINDOW_S * 10 / Math.max(1, r.segments))))} | ${f1(mean(rs.map((r) => r.s3Cpu)))} |`;
  };
  return ['| target (mean of rounds) | service CPU % | RSS mean MiB | RSS max MiB | segments | service CPU ms per segment | S3 server CPU % |',
    '|---|---:|---:|---:|---:|---:|---:|', line('memfs'), line('s3')];
}

async function report(rounds: Round[], idle: { cpu: number; rss: number }, up: [string, string], s3: S3Target): Promise<boolean> {
  const ok = rounds.length > 0 && rounds.every(okRound);
  const date = new Date().toISOString();
  const text = [
    `# HLS into S3 vs memfs through the service, ${PROCS} processes, ${date}`, '',
    `Node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? '?'}. \`node bench/s3/hls-s3-vs-memfs.ts\` `
      + `(S3BENCH_ROUNDS=${ROUNDS}, S3BENCH_WINDOW_S=${WINDOW_S}, S3BENCH_WARM_S=${WARM_S}, S3BENCH_PROCS=${PROCS}). `
      + `S3: ${s3.local ? '@20minutes/s3rver (the tests\' server, objects on local disk), its own process' : `external ${s3.endpoint}`}. `
      + `Service: disk-fs, memfs, s3-fs (one entry \`${S3_NAME}\` at /${S3_NAME}, no mount auth), \`http.threads: 0\`, log level error, in a child process. `
      + `${PROCS} processes of the service each remux a looping 640x360 25 fps ~1 Mbit/s H.264 + AAC file (\`-re -stream_loop -1 -c copy\`) to HLS `
      + `(\`-hls_time 2 -hls_list_size 6 -hls_flags delete_segments -method PUT\`) at \`{memfs}/r<n>/p<i>.m3u8\` or \`{fs:${S3_NAME}}/r<n>/p<i>.m3u8\`. `
      + `Per round: new processes, ${WARM_S} s warm-up, ${WINDOW_S} s window, then processes and files deleted. CPU is the service process's `
      + `utime + stime (its ffmpeg children excluded); the S3 server's is apart. A 256 KiB PUT through the same mount every 2 s times what a segment upload waits. `
      + 'RSS only climbs from round to round (the heap keeps what it grew to), so a later round starts higher whatever its target: read the rise within a round.', '',
      `uptime before: \`${up[0]}\``, `uptime after: \`${up[1]}\``, '',
      `Service idle (before the rounds, ${IDLE_S} s): ${f1(idle.cpu)} % of a core, RSS ${f1(idle.rss)} MiB.`, '',
      ...table(rounds), '', ...summary(rounds), '', `Result: ${ok ? 'PASS' : 'FAIL'} (correctness only: processes running, playlists readable and playable).`, '',
  ].join('\n');
  const dir = fileURLToPath(new URL('../results/', import.meta.url));
  await mkdir(dir, { recursive: true });
  const file = join(dir, `s3-hls-${date.slice(0, 10)}${TAG}.md`);
  await writeFile(file, text);
  console.log(text);
  console.log(`wrote ${file}`);
  return ok;
}

async function main(): Promise<void> {
  const teardowns: (() => unknown)[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'bench-s3-hls-'));
  let ctx: Ctx | undefined;
  try {
    await mkdir(join(dir, 'disk'), { recursive: true });
    makeSource(join(dir, 'disk', 'src.mp4'), 20);
    const s3 = await startS3({ teardown: (fn) => { teardowns.push(fn); } });
    ctx = await startService(dir, s3);
    if (s3.local && !ctx.s3pid) throw new Error('the S3 server process was not found');
    await sleep(2000);
    const c0 = cpuSeconds(ctx.pid);
    await sleep(IDLE_S * 1000);
    const idle = { cpu: (cpuSeconds(ctx.pid) - c0) / IDLE_S * 100, rss: rssMb(ctx.pid) };
    const up0 = uptime();
    const rounds: Round[] = [];
    for (let i = 0; i < ROUNDS * 2; i++) {
      const target: Target = i % 2 === 0 ? 'memfs' : 's3';
      const r = await runRound(ctx, target, i + 1);
      console.log(`round ${r.n} ${target}: cpu ${f1(r.cpu)} %, rss ${f1(r.rssMean)}/${f1(r.rssMax)} MiB, segments ${r.segments}, ${okRound(r) ? 'ok' : 'FAIL'}`);
      rounds.push(r);
    }
    const ok = await report(rounds, idle, [up0, uptime()], s3);
    console.log(ok ? 'PASS' : 'FAIL');
    process.exitCode = ok ? 0 : 1;
  } finally {
    if (ctx && ctx.service.exitCode === null) await new Promise((resolve) => { ctx!.service.once('exit', resolve); ctx!.service.send('stop'); });
    for (const fn of teardowns.reverse()) await fn();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
