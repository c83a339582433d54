import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loaderArgs } from '../runtime/loader.ts';
import { answerParent, startCore, PLAYLIST, SEGMENT } from './servers.ts';
import { ask, median, needWrk, wrk, type WrkRun } from './wrk.ts';

/**
 * Serving threads (`http.threads`) measured with `wrk` (C, one client thread: far lighter than
 * autocannon, which was the bottleneck of threads.ts on this machine): req/s and GB/s of the
 * ~400 B playlist and the 1 MiB segment from memfs, over HTTP and HTTPS, with 0, 1 and 2 threads
 * (each its own child process, measured in alternating rounds, medians), the server's CPU, and
 * its RSS (memory per thread = the difference to 0 threads). The threads listen on the HTTPS port
 * too (reusePort, main's certificate), so the HTTPS rows show TLS spread over the threads.
 *
 * Needs `wrk` (Debian: `apt-get install wrk`) and `openssl` (a self-signed certificate).
 * Run: `node bench/memfs/threads-wrk.ts [seconds per round, default 3] [rounds, default 5] [threads list, default 0,1,2] [connections, default 100] [protocols, default http,https]`.
 * Writes bench/results/threads-<date>-wrk.md (`-wrk-https.md` etc. for one protocol).
 */

const SECONDS = Number(process.argv[2] ?? 3);
const ROUNDS = Number(process.argv[3] ?? 5);
const SETTINGS = (process.argv[4] ?? '0,1,2').split(',').map(Number);
const CONNECTIONS = Number(process.argv[5] ?? 100);
const PROTOCOLS = (process.argv[6] ?? 'http,https').split(',') as Array<'http' | 'https'>;

interface Server { threads: number; child: ChildProcess; http: string; https: string }

async function main(): Promise<void> {
  needWrk('bench/memfs/threads-wrk.ts');
  const servers: Server[] = [];
  for (const threads of SETTINGS) {
    const child = fork(fileURLToPath(import.meta.url), ['serve', String(threads)], { execArgv: loaderArgs() });
    const urls = await new Promise<{ http: string; https: string }>((resolve, reject) => {
      child.once('message', (m) => resolve(m as { http: string; https: string }));
      child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
    });
    servers.push({ threads, child, ...urls });
  }
  const load = loadavg()[0]!;
  const lines: string[] = [];
  try {
    for (const proto of PROTOCOLS) {
      for (const c of [{ name: 'playlist ~400 B', path: '/live/index.m3u8', size: PLAYLIST.length }, { name: 'segment 1 MiB', path: '/live/segment.ts', size: SEGMENT.length }]) {
        const runs = new Map<number, WrkRun[]>(servers.map((s) => [s.threads, []]));
        const cpu = new Map<number, number[]>(servers.map((s) => [s.threads, []]));
        for (const s of servers) await wrk(`${s[proto]}/memfs${c.path}`, 1, CONNECTIONS);
        for (let round = 0; round < ROUNDS; round++) {
          for (const s of round % 2 ? [...servers].reverse() : servers) {
            const before = (await ask(s.child, 'cpu')) as number;
            runs.get(s.threads)!.push(await wrk(`${s[proto]}/memfs${c.path}`, SECONDS, CONNECTIONS));
            cpu.get(s.threads)!.push(((await ask(s.child, 'cpu')) as number - before) / (SECONDS * 1e6));
          }
        }
        const base = median(runs.get(SETTINGS[0]!)!.map((r) => r.rps));
        for (const s of servers) {
          const rs = runs.get(s.threads)!;
          const rps = median(rs.map((r) => r.rps));
          const line = `| ${proto.toUpperCase()} | ${c.name} | ${s.threads} | ${Math.round(rps)} | ${((rps * c.size) / 1e9).toFixed(3)} | ${(rps / base).toFixed(2)} | ${median(rs.map((r) => r.p99)).toFixed(1)} | ${Math.round(median(cpu.get(s.threads)!) * 100)} % | ${rs.reduce((n, r) => n + r.errors + r.non2xx, 0)} | ${rs.map((r) => Math.round(r.rps)).join(', ')} |`;
          lines.push(line);
          console.log(line);
        }
      }
    }
    const rss = new Map<number, number>();
    for (const s of servers) rss.set(s.threads, (await ask(s.child, 'rss')) as number);
    const rss0 = rss.get(0);
    for (const s of servers) {
      const mib = rss.get(s.threads)! / 1048576;
      const per = rss0 !== undefined && s.threads > 0 ? ` (${Math.round((rss.get(s.threads)! - rss0) / s.threads / 1048576)} MiB per thread)` : '';
      lines.push(`| | RSS after the run | ${s.threads} | ${Math.round(mib)} MiB${per} | | | | | | |`);
    }
  } finally {
    for (const s of servers) s.child.send('stop');
  }
  const date = new Date().toISOString();
  const md = [
    `# memfs with serving threads (http.threads), measured with wrk, ${date}`, '',
    `Node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? '?'}, load average ${load.toFixed(2)} (1 min) at start, ${loadavg()[0]!.toFixed(2)} at the end.`,
    `wrk (one client thread, on the same cores) with ${CONNECTIONS} connections; ${ROUNDS} alternating rounds of ${SECONDS} s per setting after 1 s of`,
    'warm-up; medians. Plugins disk-fs and memfs, no sessions. HTTPS: main and the threads listen on the HTTPS port too.', '',
    `| proto | case | threads | req/s | GB/s | vs ${SETTINGS[0]} | p99 ms | server CPU | errors + non-2xx | req/s per round |`,
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---|',
    ...lines, '',
  ].join('\n');
  const only = PROTOCOLS.length === 1 ? `-${PROTOCOLS[0]}` : '';
  const out = fileURLToPath(new URL(`../results/threads-${date.slice(0, 10)}-wrk${only}.md`, import.meta.url));
  await writeFile(out, md);
  console.log(md);
}

async function serve(threads: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-threads-wrk-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost'], { stdio: 'ignore' });
  const core = await startCore(dir, { http: { threads }, tls: { enable: true, address: '127.0.0.1:0', cert_file: cert, key_file: key } });
  process.send!({ http: core.url, https: core.httpsUrl });
  answerParent(core, dir);
}

if (process.argv[2] === 'serve') void serve(Number(process.argv[3]));
else await main();
