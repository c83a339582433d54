import { fork, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { loaderArgs } from '../runtime/loader.ts';
import { startCore, PLAYLIST, SEGMENT } from './servers.ts';
import { hooksCostUs } from './hooks-cost.ts';

/**
 * memfs with sessions on vs off, same run: two services in one child process, one with the
 * plugins `disk-fs, memfs` and one with `sessions` added (loopback counted: `ip_ignorelist: []`).
 * A viewer in steady state fetches the playlist and the segments with its session id, so both
 * are measured with `?session=<id>` (registered beforehand on the sessions server, ignored by the
 * other): the playlist (~400 B, req/s; rewritten per viewer) and a 1 MiB segment (GB/s), 100
 * connections, alternating rounds, medians; also the server's CPU time per request (on this
 * shared box req/s swings with other load, CPU per request much less). Aim: sessions on within
 * 10 % of off.
 *
 * Run: `node bench/memfs/sessions.ts [seconds per round, default 2] [rounds, default 5]`.
 * Writes bench/results/memfs-sessions-<date>.{json,md}.
 */

const CONNECTIONS = 100;
const SECONDS = Number(process.argv[2] ?? 2);
const ROUNDS = Number(process.argv[3] ?? 5);
const SESSION = '2222222222222222222222';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function serve(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-sessions-'));
  const off = await startCore(join(dir, 'off'));
  const on = await startCore(join(dir, 'on'), {
    plugins: ['disk-fs', 'memfs', 'sessions'], sessions: { ip_ignorelist: [], session_timeout_sec: 30 },
  });
  // the viewer's session exists before the load starts, as for a player in steady state
  const reg = await fetch(`${on.url}/memfs/live/index.m3u8?session=${SESSION}`);
  if (!(await reg.text()).includes(`session=${SESSION}`)) throw new Error('sessions server does not tag the playlist');
  process.send!({ on: on.url, off: off.url });
  process.on('message', async (m) => {
    if (m === 'cpu') {
      const u = process.cpuUsage();
      process.send!({ cpu: u.user + u.system });
      return;
    }
    if (m !== 'stop') return;
    await on.close();
    await off.close();
    await rm(dir, { recursive: true, force: true });
    process.exit(0);
  });
}

async function main(): Promise<void> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['serve'], { execArgv: loaderArgs() });
  const urls = await new Promise<{ on: string; off: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { on: string; off: string }));
    child.once('exit', (code) => reject(new Error(`server process exited (${code})`)));
  });
  const load = loadavg()[0]!;
  // server CPU time per request: robust against other load on the machine, unlike req/s
  const cpu = () => new Promise<number>((resolve) => {
    child.once('message', (m) => resolve((m as { cpu: number }).cpu));
    child.send('cpu');
  });
  const measure = async (url: string) => {
    const before = await cpu();
    const r = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS });
    const used = (await cpu()) - before;
    return { r, usPerReq: used / Math.max(1, r.requests.total) };
  };
  const cases = [
    { name: 'playlist ~400 B', path: `/memfs/live/index.m3u8?session=${SESSION}`, size: PLAYLIST.length },
    { name: 'segment 1 MiB', path: `/memfs/live/segment.ts?session=${SESSION}`, size: SEGMENT.length },
  ];
  const rows: Record<string, unknown>[] = [];
  const ratios: Record<string, number> = {};
  const cpuRatios: Record<string, number> = {};
  try {
    for (const c of cases) {
      const runs = { on: [] as autocannon.Result[], off: [] as autocannon.Result[] };
      const us = { on: [] as number[], off: [] as number[] };
      for (const s of ['off', 'on'] as const) await autocannon({ url: urls[s] + c.path, connections: CONNECTIONS, duration: 1 });
      for (let round = 0; round < ROUNDS; round++) {
        for (const s of (round % 2 ? ['on', 'off'] : ['off', 'on']) as Array<'on' | 'off'>) {
          const m = await measure(urls[s] + c.path);
          runs[s].push(m.r);
          us[s].push(m.usPerReq);
        }
      }
      const rps = { on: median(runs.on.map((r) => r.requests.average)), off: median(runs.off.map((r) => r.requests.average)) };
      for (const s of ['off', 'on'] as const) {
        const row = {
          case: c.name, sessions: s, req_per_sec: Math.round(rps[s]), gbytes_per_sec: Number(((rps[s] * c.size) / 1e9).toFixed(3)),
          server_cpu_us_per_req: Number(median(us[s]).toFixed(1)),
          latency_p99_ms: median(runs[s].map((r) => r.latency.p99)), errors: runs[s].reduce((n, r) => n + r.errors, 0),
          non2xx: runs[s].reduce((n, r) => n + r.non2xx, 0), rounds_req_per_sec: runs[s].map((r) => Math.round(r.requests.average)),
        };
        rows.push(row);
        console.log(JSON.stringify(row));
      }
      ratios[c.name] = Number((rps.on / rps.off).toFixed(3));
      cpuRatios[c.name] = Number((median(us.off) / median(us.on)).toFixed(3));
    }
  } finally {
    child.send('stop');
  }
  const hooksUs = Number((await hooksCostUs()).toFixed(2));
  const meta = {
    date: new Date().toISOString(), node: process.version, cpus: `${cpus().length} x ${cpus()[0]?.model ?? '?'}`,
    load_avg_1m_at_start: Number(load.toFixed(2)), connections: CONNECTIONS, seconds_per_round: SECONDS, rounds: ROUNDS,
  };
  const dir = fileURLToPath(new URL('../results/', import.meta.url));
  await mkdir(dir, { recursive: true });
  const base = join(dir, `memfs-sessions-${meta.date.slice(0, 10)}`);
  await writeFile(`${base}.json`, JSON.stringify({ meta, on_vs_off: ratios, on_vs_off_by_cpu: cpuRatios, hooks_us_per_playlist_request: hooksUs, results: rows }, null, 2) + '\n');
  await writeFile(`${base}.md`, [
    `# memfs with sessions on vs off, ${meta.date}`, '',
    `Node ${meta.node}, ${meta.cpus}, load average ${meta.load_avg_1m_at_start} at start. autocannon, ${CONNECTIONS} connections,`,
    `${ROUNDS} alternating rounds of ${SECONDS} s per server after 1 s of warm-up; medians. Both servers in one child process.`,
    'Requests carry a registered `?session=` id, as a player in steady state does.', '',
    '| case | sessions | req/s | GB/s | server CPU µs/req | p99 ms | errors | non-2xx | req/s per round |', '|---|---|---:|---:|---:|---:|---:|---:|---|',
    ...rows.map((r) => `| ${r.case} | ${r.sessions} | ${r.req_per_sec} | ${r.gbytes_per_sec} | ${r.server_cpu_us_per_req} | ${r.latency_p99_ms} | ${r.errors} | ${r.non2xx} | ${(r.rounds_req_per_sec as number[]).join(', ')} |`),
    '', `On / off (req/s, same as GB/s): ${Object.entries(ratios).map(([k, v]) => `${k} ${v}`).join(', ')} (aim: 0.9 or more).`,
    `On / off by server CPU per request (capacity when CPU-bound): ${Object.entries(cpuRatios).map(([k, v]) => `${k} ${v}`).join(', ')}.`,
    `The sessions hooks alone (preServe, transformPlaylist, onServed with the real taps, no sockets, \`hooks-cost.ts\`): ${hooksUs} µs per playlist request.`, '',
  ].join('\n'));
}

if (process.argv[2] === 'serve') void serve();
else await main();
