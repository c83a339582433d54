import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { markdown as configMarkdown, runConfigAttacks, type ConfigAttackReport } from './config.ts';
import { markdown as httpMarkdown, runHttpAttacks, type HttpAttackRun } from './http.ts';
import { rtmpAttacksMarkdown, runRtmpAttacks, type RtmpAttackResult } from './rtmp.ts';
import { runSrtAttacks, signed, srtAttacksMarkdown, SRT_SETUP, type SrtAttackResult } from './srt.ts';

/*
 * Every attack of issue 27 in one run: HTTP, RTMP, config and SRT, each family by its own runner
 * against the service started as its own OS process (one per family), then one table per family
 * with the same columns: RSS growth (peak during, and after, MiB), 5xx answers, whether the
 * legitimate client was served (and how fast), whether the service survived.
 *
 *   node bench/attacks/run.ts [--only http,rtmp,config,srt] [--write]
 *
 * `--write` writes bench/results/attacks-<date>.md: the tables, the machine (cores, memory, load
 * before and after), each family's time, and each family's own detailed table.
 */

const FAMILIES = ['http', 'rtmp', 'config', 'srt'] as const;
type Family = (typeof FAMILIES)[number];

export interface Row { attack: string; peakMiB: number; afterMiB: number; fiveXx: string; legit: string; survived: boolean }
interface Outcome { family: Family; seconds: number; rows: Row[]; detail: string; error?: string }

const yes = (ok: boolean, detail: string) => `${ok ? 'yes' : '**no**'}${detail ? `, ${detail}` : ''}`;

function httpRows(run: HttpAttackRun): Row[] {
  return run.results.map((r) => ({
    attack: r.name, peakMiB: r.rss_growth_mb, afterMiB: r.rss_after_mb - r.rss_before_mb,
    fiveXx: `${r.five_xx}${r.documented_507 ? ` (${r.documented_507} of them memfs's documented 507 "full")` : ''}`,
    legit: yes(r.legit_served_within_1s, `${r.legit.served}/${r.legit.probes} probes within 1 s, worst ${r.legit.worst_ms} ms`),
    // the runner reads the service's RSS from /proc after each attack: it throws if the service is gone
    survived: true,
  }));
}

function rtmpRows(results: RtmpAttackResult[] | SrtAttackResult[]): Row[] {
  return results.map((r) => ({
    attack: r.attack, peakMiB: r.rssGrowthMiB, afterMiB: r.rssAfterMiB,
    fiveXx: `${r.api5xx} of ${r.apiRequests} API requests${r.apiFailed ? ` (${r.apiFailed} failed)` : ''}`,
    legit: yes(r.legitServed, `${r.legitMs} ms`), survived: r.survived,
  }));
}

function configRows(r: ConfigAttackReport): Row[] {
  const rows: Row[] = r.outcomes.map((a) => ({
    attack: `${a.attack} (PUT ${a.put || '-'}, reload ${a.reload || '-'})`, peakMiB: NaN, afterMiB: a.rssAfterMb - a.rssBeforeMb,
    fiveXx: String(a.fiveXX), legit: yes(a.served, Number.isFinite(a.servedMs) ? `${a.servedMs.toFixed(0)} ms` : ''), survived: a.survived,
  }));
  const re = r.reloads;
  rows.push({
    attack: `${re.count} reloads (after ${re.warmUps} warm-up), ${re.seconds.toFixed(0)} s`, peakMiB: NaN, afterMiB: re.rssAfterMb - re.rssBeforeMb,
    fiveXx: '-', legit: yes(re.served, ''), survived: re.survived,
  });
  rows.push({ attack: 'stopped and started again on its stored file', peakMiB: NaN, afterMiB: NaN, fiveXx: '-', legit: '-', survived: r.bootsAfterRestart });
  return rows;
}

const say = (line: string) => process.stdout.write(`${line}\n`);

async function runFamily(family: Family): Promise<Omit<Outcome, 'family' | 'seconds'>> {
  const progress = (l: string) => say(`  [${family}] ${l}`);
  switch (family) {
    case 'http': {
      const run = await runHttpAttacks({ log: progress });
      return { rows: httpRows(run), detail: httpMarkdown(run).replace(/^# .*\n\n/, '') };
    }
    case 'rtmp': {
      const results = await runRtmpAttacks({ progress });
      return { rows: rtmpRows(results), detail: `The service (default config, RTMP on); attackers from 127.0.0.2-4 and 127.0.1.x, the legitimate raw publisher and player from 127.0.0.1 (served = the player got the publisher's metadata).\n\n${rtmpAttacksMarkdown(results)}\n` };
    }
    case 'config': {
      const report = await runConfigAttacks();
      return { rows: configRows(report), detail: configMarkdown(report) };
    }
    case 'srt': {
      const results = await runSrtAttacks({ progress });
      return { rows: rtmpRows(results), detail: `Setup: ${SRT_SETUP}\n\n${srtAttacksMarkdown(results)}\n` };
    }
  }
}

const LEGIT: Record<Family, string> = {
  http: '`GET /api/v3/process` with a token from 127.0.0.1 every 250 ms; served = every probe answered 2xx within 1 s',
  rtmp: 'a raw RTMP publisher and player from 127.0.0.1; 5xx: of `GET /api/v3/rtmp` polled every 200 ms',
  config: 'after each attack, `GET /api` answered 200 within 1 s; RSS before and after the attack (no peak sampled); 5xx: of the PUT and the reload',
  srt: 'an ffmpeg publisher and player (5 frames decoded) from 127.0.0.1, timed from starting the publisher; 5xx: of `GET /api/v3/srt` polled every 200 ms',
};

export function table(o: Outcome): string {
  const head = [`### ${o.family} (${o.seconds.toFixed(0)} s)`, '', `Legitimate client: ${LEGIT[o.family]}.`, ''];
  if (o.error) return [...head, `**The run failed**: ${o.error}`, ''].join('\n');
  return [...head,
    '| attack | RSS growth, peak (MiB) | RSS growth, after (MiB) | 5xx | legitimate client served | survived |',
    '|---|---|---|---|---|---|',
    ...o.rows.map((r) => `| ${r.attack} | ${signed(r.peakMiB)} | ${signed(r.afterMiB)} | ${r.fiveXx} | ${r.legit} | ${r.survived ? 'yes' : '**no**'} |`), '',
  ].join('\n');
}

function machine(before: number[], seconds: number): string {
  const fmt = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
  let commit = '?';
  try { commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim(); } catch { /* not a checkout */ }
  return `Machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}; `
    + `load average (1, 5, 15 min) ${fmt(before)} before, ${fmt(loadavg())} after; commit ${commit}; ${(seconds / 60).toFixed(1)} min in all.`;
}

function parseOnly(): Family[] {
  const i = process.argv.indexOf('--only');
  if (i < 0) return [...FAMILIES];
  const wanted = (process.argv[i + 1] ?? '').split(',').filter(Boolean);
  const unknown = wanted.filter((w) => !(FAMILIES as readonly string[]).includes(w));
  if (unknown.length || !wanted.length) throw new Error(`--only takes a comma-separated list of ${FAMILIES.join(', ')} (got '${process.argv[i + 1] ?? ''}')`);
  return FAMILIES.filter((f) => wanted.includes(f));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const families = parseOnly();
  const date = new Date().toISOString().slice(0, 10);
  const loadBefore = loadavg();
  const started = performance.now();
  const outcomes: Outcome[] = [];
  for (const family of families) {
    say(`${family} attacks`);
    const t0 = performance.now();
    try {
      outcomes.push({ family, ...(await runFamily(family)), seconds: (performance.now() - t0) / 1000 });
    } catch (err) {
      outcomes.push({ family, rows: [], detail: '', error: (err as Error).stack ?? String(err), seconds: (performance.now() - t0) / 1000 });
    }
    say(`\n${table(outcomes.at(-1)!)}`);
  }
  const about = machine(loadBefore, (performance.now() - started) / 1000);
  say(about);
  if (process.argv.includes('--write')) {
    const only = families.length < FAMILIES.length ? ` --only ${families.join(',')}` : '';
    const md = [
      `# Attacks (issue 27), ${date}`, '',
      `\`node bench/attacks/run.ts${only} --write\`: each family against the service started as its own OS process (the CLI), attackers from loopback addresses other than 127.0.0.1, the legitimate client from 127.0.0.1. RSS from /proc of the service process; "after" is a few seconds after the attack ended, both relative to just before it.`, '',
      about, '',
      ...outcomes.map(table), '## Details', '',
      ...outcomes.filter((o) => o.detail).map((o) => `### ${o.family}: details\n\n${o.detail.trim()}\n`),
    ].join('\n');
    const file = fileURLToPath(new URL(`../results/attacks-${date}.md`, import.meta.url));
    await writeFile(file, md);
    say(`written: ${file}`);
  }
}
