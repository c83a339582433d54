import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { get } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loaderArgs } from '../runtime/loader.ts';

/**
 * Event fan-out (issue 19, item 5): 100 processes changing state and 50 SSE clients. Two modes:
 * - `emit` (default): the server emits `process.state` events for 100 synthetic processes through
 *   the events service (300 events/s: each process about 3 state changes a second), so what is
 *   measured is the events plugin alone;
 * - `engine`: 100 real processes with encoder `/bin/false` and `reconnect` (each run fails at once
 *   and is started again about once a second), so the engine's spawns are in the figures too.
 * Measured from the outside: the service's own CPU (utime + stime from /proc) without and with the
 * 50 clients, and the latency of each event at each client (receive time minus the event's `time`).
 * Run: `node bench/events/fanout.ts [seconds per phase, default 20] [emit|engine]`.
 * Writes bench/results/events-<date>-<mode>.{json,md}.
 */

const SECONDS = Number(process.argv[2] ?? 20);
const MODE = process.argv[3] === 'engine' ? 'engine' : 'emit';
const RATE = 300;
const PROCESSES = 100;
const CLIENTS = 50;
const TICKS = 100; // USER_HZ
const SERVER = fileURLToPath(new URL('./server.ts', import.meta.url));

function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICKS;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A minimal SSE reader: records the latency of every event it receives. */
function client(url: string, latencies: number[]): () => void {
  let stopped = false;
  const req = get(url, (res) => {
    if (res.statusCode !== 200) process.stderr.write(`client: status ${res.statusCode}\n`);
    res.setEncoding('utf8');
    let buf = '';
    res.on('data', (chunk: string) => {
      const now = Date.now();
      buf += chunk;
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        // the time field without parsing the JSON: the driver shares the machine with the service
        const d = block.indexOf('"time":"');
        if (d >= 0) latencies.push(now - Date.parse(block.slice(d + 8, d + 32)));
      }
    });
  });
  req.on('error', (err) => { if (!stopped) process.stderr.write(`client: ${err.message}\n`); });
  return () => {
    stopped = true;
    req.destroy();
  };
}

function pct(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! : NaN;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-events-'));
  const child: ChildProcess = fork(SERVER, MODE === 'emit' ? [dir, 'emit', String(RATE)] : [dir], { execArgv: loaderArgs() });
  const { url } = await new Promise<{ url: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { url: string }));
    child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
  });
  const pid = child.pid!;
  for (let i = 0; MODE === 'engine' && i < PROCESSES; i++) {
    const r = await fetch(`${url}/api/v3/process`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        id: `p${i}`, autostart: true, reconnect: true, reconnect_delay_seconds: 0,
        input: [{ id: 'in', address: 'testsrc2', options: ['-f', 'lavfi'] }], output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
      }),
    });
    if (r.status !== 200) throw new Error(`POST p${i}: ${r.status} ${await r.text()}`);
  }
  const status = async () => (await (await fetch(`${url}/api/v3/events/status`)).json()) as { history: { newest_id: number }; streams: { open: number; dropped: number } };
  await sleep(3000); // the restarts settle into their rhythm

  const phase = async (clients: number) => {
    const latencies: number[] = [];
    const stops = Array.from({ length: clients }, () => client(`${url}/api/v3/events?types=process.*`, latencies));
    // every client connected (a loaded service may take a while to accept 50), then one more second
    for (let i = 0; i < 300 && (await status()).streams.open < clients; i++) await sleep(100);
    await sleep(1000);
    latencies.length = 0;
    const id0 = (await status()).history.newest_id;
    const cpu0 = cpuSeconds(pid);
    const t0 = Date.now();
    await sleep(SECONDS * 1000);
    const cpu = (cpuSeconds(pid) - cpu0) / ((Date.now() - t0) / 1000);
    const end = await status();
    const events = end.history.newest_id - id0;
    for (const stop of stops) stop();
    const sorted = latencies.sort((a, b) => a - b);
    return {
      clients, open_at_end: end.streams.open, dropped: end.streams.dropped, events_per_s: Math.round(events / SECONDS), cpu_percent_of_core: Math.round(cpu * 1000) / 10,
      deliveries: sorted.length, latency_ms: { p50: pct(sorted, 50), p99: pct(sorted, 99), max: sorted.at(-1) ?? NaN },
    };
  };
  const without = await phase(0);
  const withClients = await phase(CLIENTS);
  child.send('stop');
  await new Promise((r) => child.once('exit', r));
  await rm(dir, { recursive: true, force: true });

  const date = new Date().toISOString().slice(0, 10);
  const result = { date, mode: MODE, node: process.version, cpus: cpus().length, loadavg: loadavg(), seconds: SECONDS, processes: PROCESSES, phases: [without, withClients] };
  const md = [
    `# events fan-out, ${date}`, '',
    `Node ${process.version}, ${cpus().length} CPUs, load average before: ${loadavg().map((l) => l.toFixed(2)).join(' ')}.`,
    MODE === 'emit'
      ? `Mode \`emit\`: \`process.state\` events of ${PROCESSES} synthetic processes emitted through the events service at ${RATE}/s, ${SECONDS} s per phase.`
      : `Mode \`engine\`: ${PROCESSES} processes with encoder \`/bin/false\` and reconnect (state changes without ffmpeg), ${SECONDS} s per phase.`,
    `Run: \`node bench/events/fanout.ts ${SECONDS} ${MODE}\`. Aim: p99 event latency under 50 ms with ${CLIENTS} clients.`, '',
    '| SSE clients | events/s | service CPU (% of one core) | deliveries | latency p50 | p99 | max |',
    '|---|---|---|---|---|---|---|',
    ...[without, withClients].map((p) => `| ${p.clients} | ${p.events_per_s} | ${p.cpu_percent_of_core} | ${p.deliveries} | ${p.latency_ms.p50} ms | ${p.latency_ms.p99} ms | ${p.latency_ms.max} ms |`),
    '',
  ].join('\n');
  const out = fileURLToPath(new URL('../results/', import.meta.url));
  await mkdir(out, { recursive: true });
  await writeFile(join(out, `events-${date}-${MODE}.json`), JSON.stringify(result, null, 2) + '\n');
  await writeFile(join(out, `events-${date}-${MODE}.md`), md);
  process.stdout.write(md);
}

await main();
