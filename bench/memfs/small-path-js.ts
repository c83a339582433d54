import { IncomingMessage, ServerResponse } from 'node:http';
import { Duplex } from 'node:stream';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PLAYLIST_236, startCore } from './servers.ts';
import { median } from './wrk.ts';

/**
 * The JavaScript of one small-file request without sockets (issue 29, point 6), where load on a
 * shared machine moves the socket figures of small-path.ts a lot and this one little: node's
 * IncomingMessage and ServerResponse over an in-memory socket that drops what it is given, handed
 * to the service's HTTP listener (the file door, the sessions taps as the default config runs
 * them: loopback ignored) and to a bare handler sending the same bytes and headers. The
 * difference is what the service adds to a request in JavaScript. CPU time of the process (user
 * + system) per request, rounds alternating; the least of the rounds (other load on the machine
 * only adds to a round) and the median.
 * Run: `node bench/memfs/small-path-js.ts [requests per round, default 100000] [rounds, default 9]`.
 */

const N = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.argv[3] ?? 9);
const PATH = '/memfs/live/live.m3u8';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A socket that takes every write at once and never reads. */
function sink(): Duplex {
  const s = new Duplex({ read() {}, write(_c, _e, cb) { cb(); }, writev(_c, cb) { cb(); } });
  Object.defineProperty(s, 'remoteAddress', { value: '127.0.0.1' });
  return s;
}

/** CPU µs per request of `handler` over `n` requests (in batches: node uncorks the socket and runs its ticks between them). */
async function run(handler: Handler, socket: Duplex, n: number): Promise<number> {
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const req = new IncomingMessage(socket as never);
    req.method = 'GET';
    req.url = PATH;
    req.headers = { host: '127.0.0.1:8080' };
    req.rawHeaders = ['Host', '127.0.0.1:8080'];
    req.complete = true;
    const res = new ServerResponse(req);
    res.assignSocket(socket as never);
    handler(req, res);
    if (!res.writableEnded) throw new Error('not answered at once');
    res.detachSocket(socket as never);
    if (i % 64 === 63) await new Promise(setImmediate);
  }
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / n;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-small-path-js-'));
  const core = await startCore(dir, { http: { threads: 0 }, plugins: ['disk-fs', 'memfs', 'sessions'], sessions: { enable: true } });
  try {
    const put = await fetch(`${core.url}${PATH}`, { method: 'PUT', body: PLAYLIST_236 });
    if (put.status !== 201) throw new Error(`PUT ${PATH}: ${put.status}`);
    const answer = await fetch(`${core.url}${PATH}`);
    const headers = [...answer.headers].filter(([k]) => !['date', 'connection', 'keep-alive'].includes(k)).flat();
    await answer.arrayBuffer();
    const server = core.app.http.server;
    const [listener] = server.listeners('request') as Handler[];
    const service: Handler = (req, res) => listener!.call(server, req, res);
    const bare: Handler = (_req, res) => {
      res.writeHead(200, headers);
      res.end(PLAYLIST_236);
    };
    const socket = sink();
    await run(bare, socket, N / 4);
    await run(service, socket, N / 4);
    const rounds: Record<'bare' | 'service', number[]> = { bare: [], service: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of r % 2 ? ['service', 'bare'] as const : ['bare', 'service'] as const) {
        rounds[name].push(await run(name === 'bare' ? bare : service, socket, N));
      }
    }
    for (const f of [Math.min, median] as const) {
      const b = f === median ? median(rounds.bare) : Math.min(...rounds.bare);
      const s = f === median ? median(rounds.service) : Math.min(...rounds.service);
      console.log(`JavaScript per request, CPU µs (${f === median ? 'median' : 'least'} of ${ROUNDS} rounds of ${N}): bare ${b.toFixed(2)}, `
        + `service ${s.toFixed(2)}; the service adds ${(s - b).toFixed(2)} (${((s / b - 1) * 100).toFixed(0)} %)`);
    }
    console.log(`rounds: bare ${rounds.bare.map((x) => x.toFixed(2)).join(', ')}; service ${rounds.service.map((x) => x.toFixed(2)).join(', ')}`);
  } finally {
    await core.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
