import { writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { basename, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startService, type Service } from './service.ts';
import { attacker, freeUdpPort, legitClient, type LegitOutcome } from './srt-clients.ts';
import type { Credentials, GuessResult, HoldResult, NamesResult, Outcome } from './srt-attacker.ts';
import { udpFlood } from './srt-wire.ts';
import type { RtmpAttackResult } from './rtmp.ts';

/*
 * Replays the SRT attacks of issue 27 against the service, started here as its own OS process
 * (the CLI, SRT on a loopback port, a token and a passphrase set, the rest its defaults unless
 * `srt` says otherwise), one process for all attacks, and reports for each: RSS growth (peak and
 * 5 s after), whether the service survived, whether a legitimate ffmpeg publisher and player
 * (127.0.0.1) were served meanwhile and how fast, and 5xx or failed answers of the API polled
 * during the attack. The attackers send from other loopback addresses (127.0.0.2 and up,
 * 127.0.2.x): 127.0.0.1 is the service's own address, which the per-address rules spare.
 *
 *   node bench/attacks/srt.ts [--connections 600] [--tree <checkout>] [--write]
 *
 * `--tree` runs the service from another checkout (before/after; its addon built there).
 * `--write` writes bench/results/attacks-srt-<date>[-<tree's folder name>].md. `runSrtAttacks` and `srtAttacksMarkdown`
 * are exported for the combined runner (bench/attacks/run.ts).
 */

/** One attack's outcome: the same figures as the RTMP attacks', for one table in run.ts. */
export type SrtAttackResult = RtmpAttackResult;

export interface SrtAttackOptions {
  /** `srt` settings over the defaults (token, passphrase and address are set here). */
  srt?: Record<string, unknown>;
  /** A checkout to run the service from (default: this one). */
  tree?: string;
  /** Wrong tokens (and, separately, passphrases) at least; more while the legitimate client runs. */
  guesses?: number;
  connections?: number;
  /** Longest a connection flood is held waiting for the server to close it. */
  holdSeconds?: number;
  udpSeconds?: number;
  progress?: (line: string) => void;
}

const MiB = 1024 * 1024;
const RIGHT: Credentials = { token: 'bench-token-27', passphrase: 'bench-passphrase-27' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `p`, or an error naming `what` after `ms` (an attack never hangs the run). */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} took over ${ms / 1000} s`)), ms); });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

const REJECTS: Record<string, string> = {
  accepted: 'accepted', '-1': 'failed', 1: 'system', 2: 'peer', 3: 'resource', 5: 'backlog', 7: 'close', 10: 'bad secret', 11: 'unsecure', 16: 'timeout',
  1400: 'bad request', 1401: 'unauthorized', 1402: 'overloaded', 1403: 'forbidden', 1404: 'not found', 1409: 'conflict',
};
const said = (o: Outcome | string) => (REJECTS[String(o)] && o !== 'accepted' ? `${o} ${REJECTS[String(o)]}` : String(o));
const tallied = (t: Record<string, number>) => Object.entries(t).sort((a, b) => b[1] - a[1]).map(([o, n]) => `${n} ${said(o)}`).join(', ');

interface Ctx {
  svc: Service;
  port: number;
  /** Runs the legitimate publisher and player once; the attack decides when. */
  legit(): Promise<LegitOutcome>;
}

/** Runs `attack` while sampling RSS and polling the API; the attack starts the legitimate client. */
async function measured(svc: Service, port: number, name: string, attack: (c: Ctx) => Promise<string>): Promise<SrtAttackResult> {
  const before = svc.rss();
  let peak = before;
  const api = { requests: 0, s5xx: 0, failed: 0 };
  let polling = true;
  const sampler = setInterval(() => { if (svc.alive()) peak = Math.max(peak, svc.rss()); }, 50);
  const poller = (async () => {
    while (polling) {
      api.requests++;
      try {
        const r = await fetch(`${svc.url}/api/v3/srt`, { signal: AbortSignal.timeout(2000) });
        await r.arrayBuffer();
        if (r.status >= 500) api.s5xx++;
      } catch {
        api.failed++;
      }
      await sleep(200);
    }
  })();
  let legit: Promise<LegitOutcome> | undefined;
  const stream = `legit-${name.replace(/\W+/g, '-').slice(0, 40)}`;
  let notes = '';
  try {
    notes = await attack({ svc, port, legit: () => (legit ??= legitClient(svc.url, port, stream, RIGHT)) });
  } catch (err) {
    notes = `the attack failed: ${(err as Error).message}`;
  } finally {
    polling = false;
    await poller;
    clearInterval(sampler);
  }
  const served = await (legit ?? Promise.resolve({ ok: false, ms: 0, why: 'not run' }));
  await sleep(5000);
  const survived = svc.alive();
  return {
    attack: name, survived, rssBeforeMiB: before, rssGrowthMiB: peak - before,
    rssAfterMiB: survived ? svc.rss() - before : NaN, legitServed: served.ok, legitMs: served.ms,
    api5xx: api.s5xx, apiFailed: api.failed, apiRequests: api.requests, notes: served.ok ? notes : `${notes}; legit: ${served.why}`,
  };
}

/** Wrong tokens or passphrases from `from` while the legitimate client runs (at least `min`). */
async function guessing(c: Ctx, what: 'token' | 'passphrase', from: string, other: string, min: number): Promise<string> {
  const a = attacker<GuessResult>({ kind: 'guess', port: c.port, what, from, other, min, right: RIGHT });
  try {
    await c.legit();
    a.stop();
    const r = await within(a.result(), 180_000, 'guessing');
    const n = Object.values(r.tally).reduce((x, y) => x + y, 0);
    return `${n} wrong ${what}s from ${from} in ${r.seconds.toFixed(1)} s (${(n / r.seconds).toFixed(0)}/s): ${tallied(r.tally)}; `
      + `then the right ${what}: from ${from} ${said(r.sameAfter)}, from ${other} ${said(r.otherAfter)}`;
  } finally {
    a.kill();
  }
}

/** The publishers the service lists whose names start with `prefix` (-1: no answer). */
async function listed(url: string, prefix: string): Promise<number> {
  return fetch(`${url}/api/v3/srt`, { signal: AbortSignal.timeout(5000) })
    .then((r) => r.json() as Promise<{ publisher?: object }>)
    .then((b) => Object.keys(b.publisher ?? {}).filter((k) => k.startsWith(prefix)).length, () => -1);
}

/**
 * `n` silent publishers (right credentials) spread over `from`, one attacker process per address
 * (they open in parallel); the legitimate client meanwhile; held until the service lists none of
 * them any more, or `holdSeconds` after they were all opened.
 */
async function flooding(c: Ctx, n: number, from: string[], holdSeconds: number): Promise<string> {
  const share = (k: number) => Math.floor(n / from.length) + (k < n % from.length ? 1 : 0);
  const attackers = from.map((addr, k) => attacker<HoldResult>({ kind: 'hold', port: c.port, n: share(k), from: [addr], prefix: `flood-${k}-`, right: RIGHT }));
  let most = 0;
  let now = -1;
  let polling = true;
  const poll = (async () => {
    while (polling) {
      now = await listed(c.svc.url, 'flood-');
      most = Math.max(most, now);
      await sleep(250);
    }
  })();
  try {
    await within(Promise.all(attackers.map((a) => a.opened)), 180_000, 'opening the connections');
    const t0 = Date.now();
    const drain = (async () => {
      while (now !== 0 && Date.now() - t0 < holdSeconds * 1000) await sleep(250);
      return (Date.now() - t0) / 1000;
    })();
    const [, seconds] = await Promise.all([c.legit(), drain]);
    for (const a of attackers) a.stop();
    const results = await within(Promise.all(attackers.map((a) => a.result())), 10_000, 'the results');
    const tally: Record<string, number> = {};
    for (const r of results) for (const [k, v] of Object.entries(r.tally)) tally[k] = (tally[k] ?? 0) + v;
    const src = from.length === 1 ? from[0] : `${from.length} addresses (${share(0)} each, in parallel)`;
    return `${n} from ${src} in ${Math.max(...results.map((r) => r.openSeconds)).toFixed(1)} s: ${tallied(tally)}; the service listed at most ${most} at once, `
      + (now === 0 ? `none ${seconds.toFixed(1)} s after the last opened (closed by the service)` : `still ${now} ${seconds.toFixed(0)} s after the last opened (then the attacker vanished)`);
  } finally {
    polling = false;
    await poll;
    for (const a of attackers) a.kill();
  }
}

async function udpFlooding(c: Ctx, seconds: number): Promise<string> {
  const legit = sleep(1000).then(() => c.legit());
  const r = await udpFlood({ port: c.port, from: '127.0.0.8', seconds, maxPerKind: 200_000 });
  await legit;
  const sent = r.sent.garbage + r.sent.induction + r.sent.conclusion;
  return `${sent} datagrams from 127.0.0.8 in ${r.seconds.toFixed(1)} s (${(sent / r.seconds).toFixed(0)}/s); answered: `
    + `${r.answered.garbage} of ${r.sent.garbage} garbage, ${r.answered.induction} of ${r.sent.induction} inductions, ${r.answered.conclusion} of ${r.sent.conclusion} conclusions with a made-up cookie`;
}

export const HOSTILE_NAMES = ['a%00b', 'a\u0000b', '..', 'live/../x', 'a%2F..%2Fb', '../../etc/passwd', 'tab%09x', './y', 'ok.name/x..y'];

async function naming(c: Ctx): Promise<string> {
  // each from its own address: a name that loses its token (a NUL cuts the streamid) counts toward a lockout
  const from = HOSTILE_NAMES.map((_, i) => `127.0.3.${i + 1}`);
  const a = attacker<NamesResult>({ kind: 'names', port: c.port, names: HOSTILE_NAMES, from, right: RIGHT });
  try {
    await within(a.opened, 60_000, 'opening the connections');
    const listed = await fetch(`${c.svc.url}/api/v3/srt`).then((r) => r.json() as Promise<{ publisher?: object }>).then((b) => Object.keys(b.publisher ?? {}), () => []);
    await c.legit();
    a.stop();
    const r = await within(a.result(), 10_000, 'the result');
    const shown = (s: string) => JSON.stringify(s).slice(1, -1);
    return r.outcomes.map((o) => `'${shown(o.name)}' ${said(o.outcome)}`).join(', ')
      + `; publishers listed meanwhile: ${listed.filter((n) => !n.startsWith('legit-')).map((n) => `'${shown(n)}'`).join(', ') || 'none'}`;
  } finally {
    a.kill();
  }
}

/** `+1.5`, `-3.0`, `-` for NaN (the service was gone). */
export const signed = (x: number) => (Number.isNaN(x) ? '-' : `${x >= 0 ? '+' : ''}${x.toFixed(1)}`);

const spread = (count: number) => Array.from({ length: count }, (_, i) => `127.0.2.${i + 1}`);

export async function runSrtAttacks(o: SrtAttackOptions = {}): Promise<SrtAttackResult[]> {
  const say = o.progress ?? (() => {});
  const n = o.connections ?? 600;
  const guesses = o.guesses ?? 150;
  const hold = o.holdSeconds ?? 20;
  const port = await freeUdpPort();
  const svc = await startService({ srt: { enable: true, address: `127.0.0.1:${port}`, ...RIGHT, ...o.srt } }, { tree: o.tree });
  try {
    const warm = await legitClient(svc.url, port, 'warm-up', RIGHT);
    if (!warm.ok) throw new Error(`the legitimate client is not served before any attack: ${warm.why}`);
    await sleep(2000);
    const attacks: Array<[string, (c: Ctx) => Promise<string>]> = [
      ['none (baseline: the legitimate client alone)', async (c) => { await c.legit(); return 'how fast the legitimate client is served without an attack'; }],
      [`token guessing (${guesses}+ wrong tokens, one address)`, (c) => guessing(c, 'token', '127.0.0.2', '127.0.0.3', guesses)],
      [`passphrase guessing (${guesses}+ wrong passphrases, one address)`, (c) => guessing(c, 'passphrase', '127.0.0.4', '127.0.0.5', guesses)],
      [`${n} silent publishers, one address`, (c) => flooding(c, n, ['127.0.0.6'], hold)],
      [`${n} silent publishers, ${Math.ceil(n / 75)} addresses`, (c) => flooding(c, n, spread(Math.ceil(n / 75)), hold)],
      [`handshake flood (UDP: garbage, inductions, bad cookies), ${o.udpSeconds ?? 10} s`, (c) => udpFlooding(c, o.udpSeconds ?? 10)],
      ['streamids with NUL, control characters, dot segments', (c) => naming(c)],
    ];
    const results: SrtAttackResult[] = [];
    for (const [name, attack] of attacks) {
      say(`attack: ${name}`);
      const r = await measured(svc, port, name, attack);
      say(`  survived ${r.survived}, RSS ${signed(r.rssGrowthMiB)} MiB peak, ${signed(r.rssAfterMiB)} after, legit ${r.legitServed ? `${r.legitMs} ms` : 'NOT served'}, API 5xx ${r.api5xx}; ${r.notes}`);
      results.push(r);
      if (!r.survived) break;
    }
    return results;
  } finally {
    await svc.stop();
  }
}

export function srtAttacksMarkdown(results: SrtAttackResult[]): string {
  const rows = results.map((r) => `| ${r.attack} | ${r.survived ? 'yes' : '**no**'} | ${r.rssBeforeMiB.toFixed(0)} | ${signed(r.rssGrowthMiB)} | ${signed(r.rssAfterMiB)} | ${r.legitServed ? `yes, ${r.legitMs} ms` : '**no**'} | ${r.api5xx} / ${r.apiFailed} of ${r.apiRequests} | ${r.notes.replaceAll('|', '\\|')} |`);
  return ['| attack | survived | RSS before (MiB) | RSS peak growth (MiB) | RSS 5 s after (MiB) | legitimate ffmpeg publisher + player served | API 5xx / failed | notes |', '|---|---|---|---|---|---|---|---|', ...rows].join('\n');
}

const arg = (name: string) => { const i = process.argv.indexOf(name); return i >= 0 ? process.argv[i + 1] : undefined; };

/** How the SRT attacks run, for the results files. */
export const SRT_SETUP = 'the service in its own process, SRT on a loopback port with a token and a passphrase, its other SRT settings the defaults, one process for all attacks; '
  + 'the attackers send from 127.0.0.2-8, 127.0.2.x and 127.0.3.x (the plugin\'s addon as a caller, in a process of their own; raw UDP for the handshake flood), '
  + 'the legitimate ffmpeg publisher (test pattern, H.264) and player (5 frames decoded) from 127.0.0.1, served = the player decoded them, timed from starting the publisher. '
  + 'RSS from /proc of the service process; `GET /api/v3/srt` polled every 200 ms during each attack.';

if (import.meta.url === `file://${process.argv[1]}`) {
  const date = new Date().toISOString().slice(0, 10);
  const loadBefore = loadavg();
  const started = Date.now();
  const tree = arg('--tree');
  const results = await runSrtAttacks({ tree: tree && resolve(tree), connections: Number(arg('--connections') ?? 600), progress: (l) => process.stdout.write(`${l}\n`) });
  const table = srtAttacksMarkdown(results);
  process.stdout.write(`\n${table}\n`);
  const fmt = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  if (process.argv.includes('--write')) {
    const md = [
      `# SRT attacks ${date}`, '',
      `\`node bench/attacks/srt.ts${tree ? ' --tree <checkout>' : ''}\`: ${SRT_SETUP}`, '',
      `Machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}; load average (1, 5, 15 min) ${fmt(loadBefore)} before, ${fmt(loadavg())} after; ${((Date.now() - started) / 1000).toFixed(0)} s in all.`, '',
      table, '',
    ].join('\n');
    const file = fileURLToPath(new URL(`../results/attacks-srt-${date}${tree ? `-${basename(resolve(tree))}` : ''}.md`, import.meta.url));
    await writeFile(file, md);
    process.stdout.write(`written: ${file}\n`);
  }
}
