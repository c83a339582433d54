import { spawnSync } from 'node:child_process';
import { Agent, request } from 'node:http';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCheckout, startDeployed } from '../process/deployed.ts';
import { api, freePort, head, makeSample, opt, ROOT, sleep, TAG, uptime, WRITE } from './common.ts';

/**
 * Many LL-HLS clients on one stream (issue 47.6): the service as deployed (`deployed.ts`), one
 * stream published by a process of its own (a looped 320x240 25 fps H.264 300 kbit/s + AAC file,
 * copied to RTMP), packaged with the plugin's defaults (2 s segments, 300 ms parts). Each client
 * does what hls.js does at the live edge: a blocking reload for the next part
 * (`_HLS_msn`/`_HLS_part`) and, at the same time, the hinted part (held until it exists), then
 * again with the new playlist's hint. Over the window: parts each client got per second (the
 * stream makes about 3.3), the gaps between a client's parts (p50, p95, max), failed requests,
 * and the service's CPU (all its threads) and RSS. The clients run in this process (keep-alive
 * sockets, two per client), so on a small box they share its cores with the service.
 * Run: `node bench/llhls/clients.ts [--clients 1000] [--window 30] [--warm 10] [--write [tag]]`;
 * `--write` writes bench/results/llhls-clients-<date>[-tag].md.
 */

const CLIENTS = Number(opt('clients', '1000'));
const WINDOW_S = Number(opt('window', '30'));
const WARM_S = Number(opt('warm', '10'));
const TICK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim());

function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICK;
}

/**
 * Keep-alive agents, each from its own loopback address: the service holds at most
 * `http.max_connections_per_address` (256) connections of one address, and the clients are many
 * viewers, not one (2 sockets each: 50 clients per address).
 */
const agents = Array.from({ length: Math.ceil(CLIENTS / 50) + 1 }, (_, i) => new Agent({ keepAlive: true, maxSockets: Infinity, localAddress: `127.0.${1 + (i >> 8)}.${(i % 250) + 2}` }));

/** A GET through `agent`; resolves with the status and the body (null on a socket error). */
function getVia(url: string, agent: Agent): Promise<{ status: number; body: Buffer } | null> {
  return new Promise((resolve) => {
    const req = request(url, { agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', () => resolve(null));
    });
    req.on('error', () => resolve(null));
    req.end();
  });
}

interface Tally { parts: number; failed: number; gaps: number[]; counting: boolean; stopped: boolean }

const HINT = /#EXT-X-PRELOAD-HINT:TYPE=PART,URI="([^"]+)"/;

/**
 * One client at the live edge, until `t.stopped`. A first answer that is a master playlist (the
 * sessions plugin names the playlist again with a session id) is followed, as a player does.
 */
async function client(base: string, t: Tally, agent: Agent): Promise<void> {
  const get = (url: string) => getVia(url, agent);
  let playlist = `${base}/index.m3u8`;
  const load = async (): Promise<string> => {
    const text = (await get(playlist))?.body.toString() ?? '';
    const variant = text.includes('#EXT-X-STREAM-INF') ? text.split('\n').find((l) => l.trim() !== '' && !l.startsWith('#')) : undefined;
    if (!variant) return text;
    playlist = `${base}/${variant.trim()}`;
    return (await get(playlist))?.body.toString() ?? '';
  };
  let text = await load();
  let last = Date.now();
  while (!t.stopped) {
    const hint = HINT.exec(text)?.[1];
    const m = hint ? /-(\d+)\.(\d+)\.m4s/.exec(hint) : null;
    if (!hint || !m) {
      await sleep(500);
      text = await load();
      continue;
    }
    const sep = playlist.includes('?') ? '&' : '?';
    const [part, list] = await Promise.all([get(`${base}/${hint}`), get(`${playlist}${sep}_HLS_msn=${m[1]}&_HLS_part=${m[2]}`)]);
    const now = Date.now();
    if (part?.status === 200 && t.counting) {
      t.parts++;
      t.gaps.push(now - last);
    }
    if (part?.status !== 200 && t.counting) t.failed++;
    if (list?.status !== 200 && t.counting) t.failed++;
    last = now;
    text = list?.status === 200 ? list.body.toString() : await load();
  }
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-llhls-clients-'));
  const svc = await startDeployed(ROOT, buildCheckout(ROOT), dir, {
    log: { level: 'warn' }, rtmp: { enable: true, address: `127.0.0.1:${await freePort()}` }, llhls: { enable: true },
    storage: { disk: { dir: join(dir, 'disk') } },
  });
  const load0 = uptime();
  const t: Tally = { parts: 0, failed: 0, gaps: [], counting: false, stopped: false };
  try {
    makeSample(join(dir, 'disk', 'sample.ts'));
    await api(svc.url, 'POST', '/api/v3/process', {
      id: 'pub', autostart: true, reconnect: true, reconnect_delay_seconds: 2,
      input: [{ id: 'in', address: '{diskfs}/sample.ts', options: ['-re', '-stream_loop', '-1'] }],
      output: [{ id: 'out', address: '{rtmp,name=bench/ll}', options: ['-c', 'copy', '-f', 'flv'] }],
    });
    const base = `${svc.url}/hls/bench/ll`;
    for (let i = 0; i < 200 && (await getVia(`${base}/index.m3u8`, agents[0]!))?.status !== 200; i++) await sleep(250);
    const runs = Array.from({ length: CLIENTS }, (_, i) => client(base, t, agents[Math.floor(i / 50)]!));
    await sleep(WARM_S * 1000);
    t.counting = true;
    const c0 = cpuSeconds(svc.pid);
    const t0 = Date.now();
    await sleep(WINDOW_S * 1000);
    const secs = (Date.now() - t0) / 1000;
    t.counting = false;
    const cpu = (cpuSeconds(svc.pid) - c0) / secs * 100;
    const rss = svc.memory().rss;
    t.stopped = true;
    await Promise.race([Promise.all(runs), sleep(5000)]);
    const md = [
      `# ${CLIENTS} LL-HLS clients on one stream (issue 47.6), ${new Date().toISOString()}`, '',
      `${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), Node ${process.version}. Commit: ${head()}.`,
      `uptime before: \`${load0}\`; after: \`${uptime()}\`.`,
      'The service as deployed, the plugin\'s defaults (2 s segments, 300 ms parts); each client: a blocking reload for the next part and the',
      `hinted part at once, again and again; the clients run in the bench's process on the same box. ${WARM_S} s warm-up, ${WINDOW_S} s measured.`, '',
      '| clients | parts per client per second | gap between parts p50 / p95 / max (ms) | failed requests | service CPU (% of a core) | service RSS (MB) |',
      '|---:|---:|---|---:|---:|---:|',
      `| ${CLIENTS} | ${(t.parts / CLIENTS / secs).toFixed(2)} | ${pct(t.gaps, 50)} / ${pct(t.gaps, 95)} / ${pct(t.gaps, 100)} | ${t.failed} | ${cpu.toFixed(1)} | ${rss.toFixed(1)} |`, '',
      'The stream makes parts of at most 300 ms (about 3.5 per second: each 2 s segment ends with a shorter one); a client that keeps up gets them all, with gaps near 300 ms.', '',
    ].join('\n');
    console.log(md);
    if (WRITE) {
      const file = join(ROOT, 'bench/results', `llhls-clients-${new Date().toISOString().slice(0, 10)}${TAG}.md`);
      await writeFile(file, md);
      console.log(`wrote ${file}`);
    }
  } finally {
    t.stopped = true;
    for (const a of agents) a.destroy();
    await svc.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
