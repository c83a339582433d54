import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ladderProcess, type ProcessDefinition } from '../../plugins/ladders/command.ts';
import { DEFAULT_GOP_SECONDS, resolveRungs, type Ladder } from '../../plugins/ladders/presets.ts';
import { cpuOf, head, opt, ROOT, sleep, TAG, uptime, WRITE } from '../llhls/common.ts';
import { buildCheckout, startDeployed } from '../process/deployed.ts';

/**
 * Adaptive-bitrate ladders (issue 48.5):
 * 1. `cpu`: the CPU of a 3-rung ladder made by ONE ffmpeg (the ladders plugin's own command:
 *    decode once, `split`, a `scale` and an x264 encoder per rung) against three ffmpeg processes
 *    each decoding the source and encoding one rung with the same options, in alternating rounds;
 *    the source is a looped 1280x720 25 fps H.264 + AAC file read at real time (`-re`), the outputs
 *    FLV written to /dev/null (the plugin's outputs are FLV to the service's RTMP listener).
 * 2. `start`: the service as deployed (RTMP, LL-HLS and ladders on) with a process publishing the
 *    same file: the time from a player's first request of the multivariant playlist of a stream
 *    whose on-demand ladder waits, to that answer listing every rendition, and to the first
 *    rendition's playlist having a segment (the first playable segment); the ladder stops after
 *    its idle time between rounds.
 * Run: `node bench/ladders/cost.ts [--rungs 480p,360p,240p] [--rounds 3] [--window 30] [--starts 5] [--write [tag]]`.
 */

const RUNGS = opt('rungs', '480p,360p,240p').split(',');
const ROUNDS = Number(opt('rounds', '3'));
const WINDOW_S = Number(opt('window', '30'));
const WARM_S = Number(opt('warm', '5'));
const STARTS = Number(opt('starts', '5'));
const PRESET = opt('preset', 'veryfast');

function makeSource(file: string): void {
  const r = spawnSync('ffmpeg', [
    '-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=1280x720:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440',
    '-t', '20', '-c:v', 'libx264', '-preset', 'veryfast', '-b:v', '3000k', '-g', '50', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '128k', '-f', 'flv', file,
  ], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('ffmpeg could not make the source');
}

const ladderOf = (rungs: readonly string[]): Ladder => ({
  id: 'bench', stream: 'bench/cam', rungs: resolveRungs([...rungs]), gop_seconds: DEFAULT_GOP_SECONDS, idle_seconds: 0,
  limits: { cpu_usage: 0, memory_mbytes: 0, waitfor_seconds: 0 }, source: 'api',
});

/** The ffmpeg arguments of a ladder process definition, reading `source` and writing every output to /dev/null. */
function argsOf(def: ProcessDefinition, source: string): string[] {
  const out = ['-hide_banner', '-nostdin', '-loglevel', 'error', '-re', '-stream_loop', '-1', '-i', source, ...def.options];
  for (const o of def.output) out.push(...o.options, '-y', '/dev/null');
  return out;
}

/** Runs the commands, returns their CPU over the window in % of one core. */
async function measure(commands: string[][]): Promise<number> {
  const children: ChildProcess[] = commands.map((a) => spawn('ffmpeg', a, { stdio: ['ignore', 'ignore', 'inherit'] }));
  try {
    await sleep(WARM_S * 1000);
    const pids = children.map((c) => c.pid!);
    const before = pids.map(cpuOf);
    await sleep(WINDOW_S * 1000);
    const after = pids.map(cpuOf);
    if (children.some((c) => c.exitCode !== null)) throw new Error('an ffmpeg ended during the window');
    return (after.reduce((s, v, i) => s + v - before[i]!, 0) / WINDOW_S) * 100;
  } finally {
    for (const c of children) c.kill('SIGKILL');
    await sleep(300);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function cpu(source: string): Promise<{ one: number[]; three: number[] }> {
  const opts = { encoder: 'libx264', preset: PRESET, idleSeconds: 30 };
  const one = [argsOf(ladderProcess(ladderOf(RUNGS), 'bench/cam', opts), source)];
  const three = RUNGS.map((r) => argsOf(ladderProcess(ladderOf([r]), 'bench/cam', opts), source));
  const res = { one: [] as number[], three: [] as number[] };
  for (let i = 0; i < ROUNDS; i++) {
    res.one.push(await measure(one));
    res.three.push(await measure(three));
    console.log(`round ${i + 1}: one ffmpeg ${res.one.at(-1)!.toFixed(1)} %, three ${res.three.at(-1)!.toFixed(1)} %`);
  }
  return res;
}

async function start(dir: string): Promise<{ master: number[]; segment: number[] }> {
  const main = buildCheckout(ROOT);
  const svc = await startDeployed(ROOT, main, dir, {
    storage: { disk: { dir: join(dir, 'disk') } },
    rtmp: { enable: true, address: '127.0.0.1:0' }, llhls: { enable: true },
    ladders: { enable: true, idle_seconds: 3, preset: PRESET },
  });
  const res = { master: [] as number[], segment: [] as number[] };
  try {
    const req = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(svc.url + path, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
      if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
      return r.json() as Promise<Record<string, unknown>>;
    };
    await req('POST', '/api/v3/process', {
      id: 'source', autostart: true, reconnect: true, reconnect_delay_seconds: 1,
      input: [{ id: 'in', address: '{diskfs}/source.flv', options: ['-re', '-stream_loop', '-1'] }],
      output: [{ id: 'out', address: '{rtmp,name=bench/cam}', options: ['-c', 'copy', '-f', 'flv'] }],
    });
    await req('PUT', '/api/v3/ladders/bench', { stream: 'bench/cam', rungs: RUNGS });
    for (let i = 0; i < STARTS; i++) {
      await until(async () => {
        const st = await req('GET', '/api/v3/process/ladder:bench_cam/state') as { exec: string; ondemand?: { waiting?: boolean } };
        if (st.ondemand?.waiting !== true || st.exec === 'running' || st.exec === 'starting') return false;
        // and no rendition is live any more (a packager's ended reader let go of it)
        const live = await (await fetch(`${svc.url}/api/v3/rtmp`)).json() as Array<{ name: string }>;
        return !live.some((x) => x.name.startsWith('/bench/cam/'));
      }, 90_000);
      await sleep(2000);
      const t0 = performance.now();
      const text = await (await fetch(`${svc.url}/hls/bench/cam/master.m3u8`)).text();
      res.master.push(performance.now() - t0);
      if (RUNGS.some((r) => !text.includes(`${r}/index.m3u8`))) throw new Error(`not every rendition listed: ${text}`);
      await until(async () => /#EXTINF/.test(await (await fetch(`${svc.url}/hls/bench/cam/${RUNGS[0]}/index.m3u8`)).text()), 30_000);
      res.segment.push(performance.now() - t0);
      console.log(`start ${i + 1}: multivariant ${res.master.at(-1)!.toFixed(0)} ms, first segment ${res.segment.at(-1)!.toFixed(0)} ms`);
      await sleep(12_000); // the idle sweep of llhls (its packagers read the renditions) and the ladder's idle time
    }
  } finally {
    await svc.stop();
  }
  return res;
}

async function until(ok: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok().catch(() => false))) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(100);
  }
}

const dir = await mkdtemp(join(tmpdir(), 'bench-ladders-'));
try {
  const before = uptime();
  makeSource(join(dir, 'source.flv'));
  const c = ROUNDS > 0 ? await cpu(join(dir, 'source.flv')) : { one: [NaN], three: [NaN] };
  await import('node:fs/promises').then((f) => f.mkdir(join(dir, 'disk'), { recursive: true }));
  await import('node:fs/promises').then((f) => f.copyFile(join(dir, 'source.flv'), join(dir, 'disk', 'source.flv')));
  const s = STARTS > 0 ? await start(dir) : { master: [], segment: [] };
  const after = uptime();
  const ratio = median(c.one) / median(c.three);
  const md = [
    `# Adaptive-bitrate ladder: one ffmpeg against one per rung, and an on-demand ladder's start (issue 48.5), ${new Date().toISOString()}`, '',
    `${cpus().length} CPUs (${cpus()[0]?.model.trim()}), Node ${process.version}. Commit: ${head()}.`,
    `uptime before: \`${before}\`; after: \`${after}\`.`,
    `Source: 1280x720 25 fps H.264 3 Mbit/s + AAC, looped at real time. Rungs: ${RUNGS.join(', ')} (the plugin's presets, x264 \`${PRESET}\`, keyframes every ${DEFAULT_GOP_SECONDS} s, no B-frames).`,
    `CPU over ${WINDOW_S} s after ${WARM_S} s, ${ROUNDS} rounds each, alternating; medians.`, '',
    '| way | CPU, % of a core (median) | rounds |', '|---|---:|---|',
    `| one ffmpeg (the ladder) | ${median(c.one).toFixed(1)} | ${c.one.map((v) => v.toFixed(1)).join(' ')} |`,
    `| one ffmpeg per rung | ${median(c.three).toFixed(1)} | ${c.three.map((v) => v.toFixed(1)).join(' ')} |`, '',
    `Ratio: ${ratio.toFixed(2)}x (aim: 0.7x or less).`, '',
  ];
  if (s.master.length > 0) {
    md.push(`On-demand start (the service as deployed, ${s.master.length} starts; the ladder waiting each time):`, '',
      '| from the first request of `master.m3u8` | median (ms) | each (ms) |', '|---|---:|---|',
      `| to its answer listing every rendition | ${median(s.master).toFixed(0)} | ${s.master.map((v) => v.toFixed(0)).join(' ')} |`,
      `| to the first rendition's playlist with a segment (first playable) | ${median(s.segment).toFixed(0)} | ${s.segment.map((v) => v.toFixed(0)).join(' ')} |`, '');
  }
  console.log(md.join('\n'));
  if (WRITE) await writeFile(join(ROOT, 'bench', 'results', `ladders-${new Date().toISOString().slice(0, 10)}${TAG}.md`), md.join('\n'));
} finally {
  await rm(dir, { recursive: true, force: true });
}
