import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childPids } from '../../test/helpers/net-proc.ts';

/**
 * SRT fan-out benchmark (issue 13, item 8): one publisher at about 2.5 Mbit/s (a pre-encoded clip
 * looped with -c copy, so the encoder costs nothing) and 0, 10 and 50 subscribers (light callers
 * through the addon in a separate process). Measures the service's CPU (utime + stime of its main
 * process and of the SRT host under it, where libsrt runs) and RSS from /proc, and drops and
 * losses from libsrt's statistics (GET /api/v3/srt for the service's side, the callers' own for theirs).
 *
 *   node bench/srt/run.ts [seconds per step, default 20]      (SRT_BENCH_TAG=x: srt-<date>-x)
 *
 * Writes bench/results/srt-<date>[-tag].{json,md}. Aim: 50 subscribers under 30 % of one core, 0 drops.
 */
const SECONDS = Number(process.argv[2] ?? 20);
const STEPS = (process.env.SRT_BENCH_STEPS ?? "0,10,50").split(",").map(Number);
const TICKS = 100; // USER_HZ
const HERE = fileURLToPath(new URL('.', import.meta.url));

function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICKS;
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

/** The processes under `pid` (the SRT host and its confinement wrappers), by /proc's parent links. */
const descendants = (pid: number): number[] => childPids(() => true, pid);

/** CPU seconds of the service's main process and of everything under it (its helpers: the SRT host). */
function treeCpu(pid: number): { main: number; helpers: number } {
  let helpers = 0;
  for (const p of descendants(pid)) {
    try {
      helpers += cpuSeconds(p);
    } catch {
      // gone meanwhile
    }
  }
  return { main: cpuSeconds(pid), helpers };
}

/** RSS of the helpers (the SRT host; wrappers included, they are small). */
function helpersRssMb(pid: number): number {
  return descendants(pid).reduce((n, p) => { try { return n + rssMb(p); } catch { return n; } }, 0);
}

function message<T>(child: ChildProcess, key: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const on = (m: any) => { if (m && key in m) { child.off('message', on); resolve(m as T); } };
    child.on('message', on);
    child.once('exit', (code) => reject(new Error(`child exited (${code}) before '${key}'`)));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function srtList(url: string): Promise<any> {
  const r = await fetch(`${url}/api/v3/srt`);
  const body = await r.json();
  if (r.status !== 200) throw new Error(`GET /api/v3/srt: ${r.status} ${JSON.stringify(body).slice(0, 500)}`);
  return body;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-srt-'));
  const clip = join(dir, 'clip.ts');
  // 2.5 Mbit/s constant-ish bitrate, keyframe every second, pre-encoded once
  const enc = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25', '-t', '20',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-b:v', '2500k', '-minrate', '2500k', '-maxrate', '2500k', '-bufsize', '1250k',
    '-x264-params', 'nal-hrd=cbr', '-g', '25', '-pix_fmt', 'yuv420p', '-muxrate', '2700k', '-f', 'mpegts', clip]);
  if (enc.status !== 0) throw new Error(`clip encode failed: ${enc.stderr}`);

  const server = fork(join(HERE, 'server.ts'), [dir]);
  const { url, srtPort } = await message<{ url: string; srtPort: number }>(server, 'url');
  const pid = server.pid!;
  const publisher = spawn('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-re', '-stream_loop', '-1', '-i', clip, '-c', 'copy', '-f', 'mpegts',
    `srt://127.0.0.1:${srtPort}?mode=caller&transtype=live&latency=120000&streamid=bench,mode:publish`], { stdio: 'ignore' });
  const results: any[] = [];
  try {
    for (let i = 0; i < 100 && !(await srtList(url)).publisher.bench; i++) await sleep(200);
    for (const n of STEPS) {
      const subs = n ? fork(join(HERE, 'subscribers.ts'), [String(srtPort), 'bench', String(n)]) : undefined;
      if (subs) await message(subs, 'ready');
      await sleep(3000); // warm-up: every subscriber past its first keyframe
      const before = await srtList(url);
      const c0 = treeCpu(pid);
      const t0 = Date.now();
      await sleep(SECONDS * 1000);
      const c1 = treeCpu(pid);
      const secs = (Date.now() - t0) / 1000;
      const mainCpu = ((c1.main - c0.main) / secs) * 100;
      const hostCpu = ((c1.helpers - c0.helpers) / secs) * 100;
      const after = await srtList(url);
      if (!after.publisher) throw new Error(`GET /api/v3/srt: ${JSON.stringify(after).slice(0, 300)}`);
      const rss = rssMb(pid);
      const hostRss = helpersRssMb(pid);
      const stats = (l: any, id: number) => l.connections[String(id)]?.stats ?? {};
      const pubAfter = stats(after, after.publisher.bench);
      const pubBefore = stats(before, before.publisher.bench);
      const subIds: number[] = after.subscriber.bench ?? [];
      const sum = (k: string) => subIds.reduce((a, id) => a + (stats(after, id)[k] ?? 0), 0);
      let callers: any[] = [];
      if (subs) {
        subs.send('report');
        callers = (await message<{ report: any[] }>(subs, 'report')).report;
        subs.send('stop');
        await new Promise((r) => subs.once('exit', r));
      }
      const row = {
        subscribers: n, cpuPercent: Number((mainCpu + hostCpu).toFixed(1)), mainCpuPercent: Number(mainCpu.toFixed(1)), hostCpuPercent: Number(hostCpu.toFixed(1)),
        rssMb: Number(rss.toFixed(0)), hostRssMb: Number(hostRss.toFixed(0)),
        publisherMbit: Number((((pubAfter.recv_bytes - pubBefore.recv_bytes) * 8) / SECONDS / 1e6).toFixed(2)),
        publisherRecvLoss: pubAfter.recv_loss_pkt, publisherRecvDrop: pubAfter.recv_drop_pkt,
        subsListed: subIds.length, serverSendDropPkt: sum('send_drop_pkt'), serverSendLossPkt: sum('send_loss_pkt'),
        serverRetransPkt: sum('sent_retrans_pkt'),
        callerRecvLossPkt: callers.reduce((a, c) => a + c.loss, 0), callerRecvDropPkt: callers.reduce((a, c) => a + c.drop, 0),
        callerMinMbytes: callers.length ? Number((Math.min(...callers.map((c) => c.bytes)) / 1e6).toFixed(1)) : 0,
        callersClosed: callers.filter((c) => c.closed).length,
      };
      results.push(row);
      console.log(JSON.stringify(row));
      await sleep(1000);
    }
  } finally {
    publisher.kill('SIGKILL');
    server.send('stop');
    await new Promise((r) => server.once('exit', r));
    await rm(dir, { recursive: true, force: true });
  }
  await report(results);
}

async function report(results: any[]): Promise<void> {
  const date = new Date().toISOString().slice(0, 10);
  const out = fileURLToPath(new URL('../results/', import.meta.url));
  await mkdir(out, { recursive: true });
  const env = { node: process.version, cpus: cpus().length, loadavg: loadavg().map((x) => x.toFixed(1)).join(' '), seconds: SECONDS };
  const tag = process.env.SRT_BENCH_TAG ? `-${process.env.SRT_BENCH_TAG}` : '';
  await writeFile(join(out, `srt-${date}${tag}.json`), JSON.stringify({ date, env, results }, null, 2) + '\n');
  const rows = results.map((r) => `| ${r.subscribers} | ${r.cpuPercent} % (${r.mainCpuPercent} + ${r.hostCpuPercent}) | ${r.rssMb} + ${r.hostRssMb} MB | ${r.publisherMbit} | ${r.publisherRecvLoss}/${r.publisherRecvDrop} | ${r.serverSendDropPkt}/${r.serverSendLossPkt}/${r.serverRetransPkt} | ${r.callerRecvLossPkt}/${r.callerRecvDropPkt} | ${r.callerMinMbytes} |`);
  const head = spawnSync('git', ['-C', fileURLToPath(new URL('../..', import.meta.url)), 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).stdout.trim().slice(0, 100);
  await writeFile(join(out, `srt-${date}${tag}.md`), [
    `# SRT fan-out benchmark, ${date}`, '',
    `Node ${env.node}, ${env.cpus} cores, load average at the end ${env.loadavg}, ${SECONDS} s per step. Commit: ${head}.`,
    'One publisher (pre-encoded 640x360 H.264 clip at about 2.5 Mbit/s, looped with `-c copy`), light subscribers through the addon in a separate process, loopback.',
    'CPU: utime + stime over the step, as % of one core, of the service: its main process and the processes under it (the SRT host, where libsrt runs, and its confinement wrappers), all threads; RSS: main + those.', '',
    '| subscribers | service CPU (main + host) | RSS (main + host) | publisher Mbit/s | publisher recv loss/drop pkts | service send drop/loss/retrans pkts (all subscribers) | subscribers recv loss/drop pkts | least MB received by a subscriber |',
    '|---|---|---|---|---|---|---|---|',
    ...rows, '',
    'Aim: 50 subscribers under 30 % of one core with 0 drops on loopback.', '',
  ].join('\n'));
}

await main();
