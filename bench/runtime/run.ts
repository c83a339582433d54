import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { loaderArgs } from './loader.ts';

/**
 * The runtime's own cost, measured from the outside on the process `npm start` ends up running
 * (`node app/main.ts`, plus `--import tsx` on a Node without type stripping): time from spawn to
 * listening, idle RSS with the default plugins, and RSS and req/s while autocannon (100
 * connections) reads a memfs playlist. Run it once per runtime:
 *   node --import tsx bench/runtime/run.ts [seconds of load, default 10]   (Node 20: before)
 *   node_modules/.bin/node bench/runtime/run.ts [seconds]                  (Node 24: after)
 * Writes bench/results/runtime-<date>-node<major>.{json,md}.
 */

const SECONDS = Number(process.argv[2] ?? 10);
const MAIN = fileURLToPath(new URL('../../app/main.ts', import.meta.url));
const PLAYLIST = Buffer.from('#EXTM3U\n#EXT-X-VERSION:3\n'.padEnd(400, '#'));

function rssMb(pid: number, field = 'VmRSS'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Math.round(Number(m![1]) / 102.4) / 10;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-runtime-'));
  await mkdir(join(dir, 'disk'));
  const configPath = join(dir, 'config.json');
  await writeFile(configPath, JSON.stringify({
    version: 3, address: '127.0.0.1:0', db: { dir: join(dir, 'db') },
    storage: { disk: { dir: join(dir, 'disk') }, memory: { auth: { enable: false } } },
  }));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CORE_')));
  const t0 = performance.now();
  const child = spawn(process.execPath, [...loaderArgs(), MAIN, '--config', configPath], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const url = await new Promise<string>((res, rej) => {
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) res(m[1]!);
    });
    child.on('exit', () => rej(new Error(`exited: ${err}`)));
  });
  const spawnToListeningMs = Math.round(performance.now() - t0);
  await new Promise((r) => setTimeout(r, 5000)); // settle: start-up garbage collected, timers armed
  const idle = rssMb(child.pid!);
  const put = await fetch(`${url}/memfs/live/index.m3u8`, { method: 'PUT', body: PLAYLIST });
  if (put.status !== 201) throw new Error(`PUT: ${put.status}`);
  let peak = 0;
  const sampler = setInterval(() => { peak = Math.max(peak, rssMb(child.pid!)); }, 250);
  const load = await autocannon({ url: `${url}/memfs/live/index.m3u8`, connections: 100, duration: SECONDS });
  clearInterval(sampler);
  const result = {
    meta: { date: new Date().toISOString(), node: process.version, loader: loaderArgs().join(' ') || 'none (type stripping)', loadavg_1m: loadavg()[0], seconds: SECONDS },
    spawn_to_listening_ms: spawnToListeningMs, idle_rss_mb: idle, load_peak_rss_mb: peak, load_hwm_rss_mb: rssMb(child.pid!, 'VmHWM'),
    memfs_playlist_req_per_sec: Math.round(load.requests.average), errors: load.errors, non2xx: load.non2xx,
  };
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  await rm(dir, { recursive: true, force: true });
  const out = fileURLToPath(new URL('../results/', import.meta.url));
  const base = join(out, `runtime-${result.meta.date.slice(0, 10)}-node${process.versions.node.split('.')[0]}`);
  await writeFile(`${base}.json`, JSON.stringify(result, null, 2) + '\n');
  console.log(JSON.stringify(result, null, 2));
}

await main();
