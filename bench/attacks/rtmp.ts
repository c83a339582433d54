import { cpus, loadavg, totalmem } from 'node:os';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { startRtmpCli } from '../../test/plugins/rtmp/helpers.ts';
import { hold, lifetime, serveOnce, type Attack } from '../../test/plugins/rtmp/attack-kit.ts';
import { CRASH_INPUTS } from '../../test/plugins/rtmp/crash-inputs.ts';
import { RawRtmp } from '../../test/plugins/rtmp/wire-kit.ts';
import { runFuzz } from '../../test/plugins/rtmp/fuzz-run.ts';

/*
 * Replays the RTMP attacks of issue 27 against the service, started here as its own OS process
 * (the CLI, port 0, the default config unless `config` says otherwise), and reports for each:
 * RSS growth (peak and after), whether the service survived, whether a legitimate publisher and
 * player were served meanwhile (and how fast), and 5xx or failed answers of the HTTP API polled
 * during the attack.
 *
 *   node bench/attacks/rtmp.ts            writes bench/results/attacks-rtmp-<date>.md
 *
 * `runRtmpAttacks` and `rtmpAttacksMarkdown` are exported for a combined runner.
 */

export interface RtmpAttackResult {
  attack: string;
  survived: boolean;
  rssBeforeMiB: number;
  /** Highest RSS during the attack minus before. */
  rssGrowthMiB: number;
  /** RSS 5 s after the attack ended minus before. */
  rssAfterMiB: number;
  legitServed: boolean;
  legitMs: number;
  api5xx: number;
  apiFailed: number;
  apiRequests: number;
  notes: string;
}

export interface RtmpAttackOptions {
  /** `rtmp` settings over the defaults (the attacks run against the defaults otherwise). */
  rtmp?: Record<string, unknown>;
  connections?: number;
  trickleMs?: number;
  /** Each crashing input is sent this many times. */
  crashRepeat?: number;
  fuzzCases?: number;
  progress?: (line: string) => void;
}

const MiB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const settle = (a: Attack, ms: number) => Promise.race([a.allClosed(), sleep(ms)]);

type Cli = Awaited<ReturnType<typeof startRtmpCli>>;

/** Runs `attack` while sampling RSS and polling the API, with one legitimate client timed meanwhile. */
async function measured(app: Cli, name: string, attack: () => Promise<string>): Promise<RtmpAttackResult> {
  const before = app.memory().rss;
  let peak = before;
  const api = { requests: 0, s5xx: 0, failed: 0 };
  let polling = true;
  const sampler = setInterval(() => { if (app.child.exitCode === null) peak = Math.max(peak, app.memory().rss); }, 50);
  const poller = (async () => {
    while (polling) {
      api.requests++;
      try {
        const r = await fetch(`${app.url}/api/v3/rtmp`, { signal: AbortSignal.timeout(2000) });
        await r.arrayBuffer();
        if (r.status >= 500) api.s5xx++;
      } catch {
        api.failed++;
      }
      await sleep(200);
    }
  })();
  const legit = sleep(500).then(() => serveOnce(app.port, `legit-${name.replace(/\W+/g, '-')}`));
  let notes = '';
  try {
    notes = await attack();
  } finally {
    polling = false;
    await poller;
    clearInterval(sampler);
  }
  const served = await legit;
  await sleep(5000);
  const survived = app.child.exitCode === null;
  return {
    attack: name, survived, rssBeforeMiB: before / MiB, rssGrowthMiB: (peak - before) / MiB,
    rssAfterMiB: survived ? (app.memory().rss - before) / MiB : NaN, legitServed: served.ok, legitMs: served.ms,
    api5xx: api.s5xx, apiFailed: api.failed, apiRequests: api.requests, notes,
  };
}

async function crashing(app: Cli, repeat: number): Promise<string> {
  let closed = 0;
  let sent = 0;
  for (let k = 0; k < repeat; k++) {
    for (const input of CRASH_INPUTS) {
      if (app.child.exitCode !== null) return `service exited after ${sent} inputs`;
      const c = await RawRtmp.open(app.port).catch(() => undefined);
      if (!c) return `connection refused after ${sent} inputs`;
      await c.handshake();
      c.write(input.bytes(app.port));
      sent++;
      if (input.ends !== false && await Promise.race([c.closed.then(() => true), sleep(15_000).then(() => false)])) closed++;
      c.close();
    }
  }
  return `${CRASH_INPUTS.length} inputs x ${repeat}; ${closed} of ${sent} connections closed by the server (${CRASH_INPUTS.filter((i) => i.ends === false).length} input(s) now valid)`;
}

/** `n` connections spread evenly over `addresses`, silent or trickling, held until the server closes them. */
async function holding(app: Cli, n: number, addresses: string[], trickleMs?: number): Promise<string> {
  const attacks = addresses.map((localAddress, i) => hold(app.port, Math.floor(n / addresses.length) + (i < n % addresses.length ? 1 : 0), { localAddress, trickleMs }));
  const t0 = Date.now();
  await Promise.all(attacks.map((a) => settle(a, 120_000)));
  const conns = attacks.flatMap((a) => a.conns);
  const open = conns.filter((c) => c.closedAt === undefined).length;
  for (const a of attacks) a.stop();
  const refused = conns.filter((c) => lifetime(c) < 1000).length;
  const longest = Math.max(...conns.map(lifetime));
  const from = addresses.length === 1 ? addresses[0] : `${addresses.length} addresses`;
  return `${n} from ${from}: ${refused} refused at accept, ${n - refused - open} closed by a timeout, ${open} still open after ${((Date.now() - t0) / 1000).toFixed(0)} s; longest held ${(longest / 1000).toFixed(1)} s`;
}

const spread = (first: number, count: number) => Array.from({ length: count }, (_, i) => `127.0.1.${first + i}`);

export async function runRtmpAttacks(o: RtmpAttackOptions = {}): Promise<RtmpAttackResult[]> {
  const teardowns: Array<() => unknown> = [];
  const t = { teardown: (fn: () => unknown) => { teardowns.push(fn); } };
  const say = o.progress ?? (() => {});
  const n = o.connections ?? 600;
  try {
    const app = await startRtmpCli(t, o.rtmp ?? {});
    await serveOnce(app.port, 'warm-up');
    await sleep(2000);
    const results: RtmpAttackResult[] = [];
    const attacks: Array<[string, () => Promise<string>]> = [
      ['crashing packets', () => crashing(app, o.crashRepeat ?? 10)],
      [`${n} silent connections, one address`, () => holding(app, n, ['127.0.0.2'])],
      [`${n} trickling connections (1 byte / ${(o.trickleMs ?? 1000) / 1000} s), one address`, () => holding(app, n, ['127.0.0.3'], o.trickleMs ?? 1000)],
      // spread so that the per-address cap lets all in: the timeouts alone end them
      [`${n} silent connections, ${Math.ceil(n / 100)} addresses`, () => holding(app, n, spread(10, Math.ceil(n / 100)))],
      [`${n} trickling connections, ${Math.ceil(n / 100)} addresses`, () => holding(app, n, spread(40, Math.ceil(n / 100)), o.trickleMs ?? 1000)],
      [`fuzz burst (${o.fuzzCases ?? 10_000} malformed sessions)`, async () => {
        const r = await runFuzz({ port: app.port, seed: 27, cases: o.fuzzCases ?? 10_000, lanes: 16, localAddress: '127.0.0.4', stop: () => app.child.exitCode !== null });
        return `${r.cases} cases, ${r.lingering} not closed by the server${r.stoppedAt !== undefined ? `, stopped at case ${r.stoppedAt}` : ''}`;
      }],
    ];
    for (const [name, attack] of attacks) {
      say(`attack: ${name}`);
      const r = await measured(app, name, attack);
      say(`  survived ${r.survived}, RSS +${r.rssGrowthMiB.toFixed(1)} MiB peak, +${r.rssAfterMiB.toFixed(1)} after, legit ${r.legitServed ? `${r.legitMs} ms` : 'NOT served'}; ${r.notes}`);
      results.push(r);
      if (!r.survived) break;
    }
    return results;
  } finally {
    for (const fn of teardowns.reverse()) await fn();
  }
}

export function rtmpAttacksMarkdown(results: RtmpAttackResult[]): string {
  const rows = results.map((r) => `| ${r.attack} | ${r.survived ? 'yes' : '**no**'} | ${r.rssBeforeMiB.toFixed(0)} | +${r.rssGrowthMiB.toFixed(1)} | +${r.rssAfterMiB.toFixed(1)} | ${r.legitServed ? `yes, ${r.legitMs} ms` : '**no**'} | ${r.api5xx} / ${r.apiFailed} of ${r.apiRequests} | ${r.notes} |`);
  return ['| attack | survived | RSS before (MiB) | RSS peak growth (MiB) | RSS 5 s after (MiB) | legitimate publisher + player served | API 5xx / failed | notes |', '|---|---|---|---|---|---|---|---|', ...rows].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const date = new Date().toISOString().slice(0, 10);
  const loadBefore = loadavg();
  const started = Date.now();
  const results = await runRtmpAttacks({ progress: (l) => process.stdout.write(`${l}\n`) });
  const table = rtmpAttacksMarkdown(results);
  process.stdout.write(`\n${table}\n`);
  const fmt = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  const md = [
    `# RTMP attacks ${date}`, '',
    `\`node bench/attacks/rtmp.ts\`: the service (default config, RTMP on) in its own process; the attackers connect from 127.0.0.2-4 and 127.0.1.x, the legitimate raw publisher and player from 127.0.0.1 (served = the player got the publisher's metadata, timed from opening the publisher's connection). RSS from /proc of the service process; the API polled every 200 ms during each attack.`, '',
    `Machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}; load average (1, 5, 15 min) ${fmt(loadBefore)} before, ${fmt(loadavg())} after; ${((Date.now() - started) / 1000).toFixed(0)} s in all.`, '',
    table, '',
  ].join('\n');
  await writeFile(fileURLToPath(new URL(`../results/attacks-rtmp-${date}.md`, import.meta.url)), md);
}
