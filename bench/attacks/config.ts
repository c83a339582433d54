import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Issue 27.4, replayed as an attacker with API access would: the five config values that got 200
 * on `PUT /api/v3/config` and then stopped the service at reload (max body 0 and -5, a port another
 * program holds, the RTMP address on the HTTP one, a TLS certificate that is not PEM), each with
 * a reload, then 2 warm-up and N reloads for RSS. The service runs as a child OS process (the
 * CLI); per attack: the PUT and reload answers, whether it survived, whether a legitimate client
 * got `GET /api` within 1 s, RSS before and after, 5xx answers seen. A service that died is started
 * again on its stored file (and, if that fails too, on the first config), which is reported.
 *
 *   node bench/attacks/config.ts [--reloads N] [--tree <checkout to run the service from>] [--write]
 *
 * `--write` puts the markdown into bench/results/attacks-config-<date>.md. `runConfigAttacks`
 * is the runner, for a combined attack bench.
 */

const MIB = 1024 * 1024;
const HERE = fileURLToPath(new URL('../..', import.meta.url));

export interface AttackOutcome {
  attack: string;
  put: number;
  reload: number;
  survived: boolean;
  /** A legitimate `GET /api` answered 200 within 1 s after the attack. */
  served: boolean;
  servedMs: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  fiveXX: number;
  /** What happened when it died: whether the stored file booted again. */
  note: string;
}

export interface ConfigAttackReport {
  tree: string;
  outcomes: AttackOutcome[];
  reloads: { warmUps: number; count: number; rssBeforeMb: number; rssAfterMb: number; survived: boolean; served: boolean; seconds: number };
  /** After everything: the service stopped and started again on its stored file. */
  bootsAfterRestart: boolean;
  load: { before: number[]; after: number[]; cores: number };
}

interface Service { child: ChildProcess; url: string; stderr: () => string }

async function startService(tree: string, configPath: string, cwd: string): Promise<Service> {
  const child = spawn(process.execPath, [join(tree, 'core/main.ts'), '--config', configPath], { cwd, stdio: ['ignore', 'ignore', 'pipe'], env: cleanEnv() });
  let err = '';
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`no URL printed: ${err.slice(-2000)}`)), 60_000);
    child.stderr!.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-20_000);
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) { clearTimeout(timer); res(m[1]!); }
    });
    child.once('exit', (code) => { clearTimeout(timer); rej(new Error(`exited (${code}): ${err.slice(-2000)}`)); });
  });
  return { child, url, stderr: () => err };
}

function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CORE_')));
}

async function stop(s: Service): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  const gone = new Promise((r) => s.child.once('exit', r));
  s.child.kill('SIGTERM');
  const timer = setTimeout(() => s.child.kill('SIGKILL'), 20_000);
  await gone;
  clearTimeout(timer);
}

function rssMb(s: Service): number {
  try {
    const status = readFileSync(`/proc/${s.child.pid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN) * 1024 / MIB;
  } catch {
    return NaN;
  }
}

async function call(url: string, method: string, path: string, body?: unknown, timeoutMs = 30_000): Promise<number> {
  try {
    const r = await fetch(url + path, {
      method, signal: AbortSignal.timeout(timeoutMs),
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    await r.arrayBuffer();
    return r.status;
  } catch {
    return 0;
  }
}

/** A legitimate client: `GET /api` answered 200 within 1 s? */
async function legit(url: string): Promise<{ served: boolean; ms: number }> {
  const t0 = performance.now();
  const status = await call(url, 'GET', '/api', undefined, 1000);
  const ms = performance.now() - t0;
  return { served: status === 200 && ms <= 1000, ms };
}

async function settle(s: Service): Promise<boolean> {
  // a reload answered OK runs after the answer: give it time to fail or finish
  const deadline = Date.now() + 10_000;
  await new Promise((r) => setTimeout(r, 1500));
  while (Date.now() < deadline) {
    if (s.child.exitCode !== null || s.child.signalCode !== null) return false;
    if (await call(s.url, 'GET', '/api', undefined, 2000) === 200) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

/** Another OS process holding a loopback port (as "another program" does). */
async function portHolder(): Promise<{ port: number; stop(): void }> {
  const child = spawn(process.execPath, ['-e', "const s = require('node:net').createServer().listen(0, '127.0.0.1', () => console.log(s.address().port))"], { stdio: ['ignore', 'pipe', 'ignore'] });
  const port = await new Promise<number>((res, rej) => {
    child.stdout!.once('data', (d: Buffer) => res(Number(d.toString().trim())));
    child.once('exit', () => rej(new Error('port holder exited')));
  });
  return { port, stop: () => { child.kill('SIGKILL'); } };
}

interface Ctx { tree: string; dir: string; configPath: string; initial: string; service: Service }

/** The service died: started again on its stored file, else on the first config. */
async function revive(c: Ctx): Promise<string> {
  try {
    c.service = await startService(c.tree, c.configPath, c.dir);
    return 'died; the stored file booted again';
  } catch {
    await writeFile(c.configPath, c.initial);
    c.service = await startService(c.tree, c.configPath, c.dir);
    return 'died; the stored file did NOT boot (restarted on the first config)';
  }
}

async function attack(c: Ctx, name: string, body: (url: string) => unknown): Promise<AttackOutcome> {
  const rssBeforeMb = rssMb(c.service);
  const codes: number[] = [];
  const put = await call(c.service.url, 'PUT', '/api/v3/config', body(c.service.url));
  codes.push(put);
  const reload = await call(c.service.url, 'GET', '/api/v3/config/reload');
  codes.push(reload);
  const survived = await settle(c.service);
  const l = survived ? await legit(c.service.url) : { served: false, ms: NaN };
  const rssAfterMb = rssMb(c.service);
  const note = survived ? '' : await revive(c);
  return { attack: name, put, reload, survived, served: l.served, servedMs: l.ms, rssBeforeMb, rssAfterMb, fiveXX: codes.filter((s) => s >= 500).length, note };
}

async function reloads(c: Ctx, warmUps: number, count: number): Promise<ConfigAttackReport['reloads']> {
  const once = async (name: string) => {
    await call(c.service.url, 'PUT', '/api/v3/config', { name });
    await call(c.service.url, 'GET', '/api/v3/config/reload');
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && c.service.child.exitCode === null) {
      const r = await fetch(`${c.service.url}/api`).then((x) => x.json() as Promise<{ name?: string }>, () => undefined);
      if (r?.name === name) return true;
      await new Promise((res) => setTimeout(res, 100));
    }
    return false;
  };
  for (let i = 0; i < warmUps; i++) await once(`warm-up-${i}`);
  const rssBeforeMb = rssMb(c.service);
  const t0 = performance.now();
  let ok = true;
  for (let i = 0; i < count && ok; i++) ok = await once(`reload-${i}`);
  const seconds = (performance.now() - t0) / 1000;
  const rssAfterMb = rssMb(c.service);
  const l = ok ? await legit(c.service.url) : { served: false };
  return { warmUps, count, rssBeforeMb, rssAfterMb, survived: ok && c.service.child.exitCode === null, served: l.served, seconds };
}

/** Runs every config attack against a service from `tree` (default: this checkout). */
export async function runConfigAttacks(o: { tree?: string; reloads?: number; warmUps?: number } = {}): Promise<ConfigAttackReport> {
  const tree = resolve(o.tree ?? HERE);
  const dir = await mkdtemp(join(tmpdir(), 'attack-config-'));
  await mkdir(join(dir, 'disk'));
  const configPath = join(dir, 'config.json');
  const initial = JSON.stringify({ address: '127.0.0.1:0', db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } }, update_check: false });
  await writeFile(configPath, initial);
  const notPem = join(dir, 'not-pem.crt');
  await writeFile(notPem, 'this is not a certificate\n');
  const holder = await portHolder();
  const load = { before: loadavg(), after: [] as number[], cores: cpus().length };
  const c: Ctx = { tree, dir, configPath, initial, service: await startService(tree, configPath, dir) };
  try {
    const outcomes: AttackOutcome[] = [];
    outcomes.push(await attack(c, 'api.max_body_size_mbytes: 0', () => ({ api: { max_body_size_mbytes: 0 } })));
    outcomes.push(await attack(c, 'api.max_body_size_mbytes: -5', () => ({ api: { max_body_size_mbytes: -5 } })));
    outcomes.push(await attack(c, 'address: a port another program holds', () => ({ address: `127.0.0.1:${holder.port}` })));
    outcomes.push(await attack(c, 'rtmp.address: the HTTP address', (url) => ({ rtmp: { enable: true, address: new URL(url).host } })));
    outcomes.push(await attack(c, 'tls: a certificate that is not PEM', () => ({ tls: { enable: true, address: '127.0.0.1:0', cert_file: notPem, key_file: notPem } })));
    const r = await reloads(c, o.warmUps ?? 2, o.reloads ?? 100);
    await stop(c.service);
    let bootsAfterRestart = true;
    try { c.service = await startService(tree, configPath, dir); } catch { bootsAfterRestart = false; }
    load.after = loadavg();
    return { tree, outcomes, reloads: r, bootsAfterRestart, load };
  } finally {
    holder.stop();
    await stop(c.service);
    await rm(dir, { recursive: true, force: true });
  }
}

const mb = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');

export function markdown(r: ConfigAttackReport): string {
  const lines = [
    `Service from ${resolve(r.tree) === resolve(HERE) ? 'this checkout' : `\`${basename(r.tree)}\``}; ${r.load.cores} cores, load average before ${r.load.before.map((x) => x.toFixed(2)).join(' / ')}, after ${r.load.after.map((x) => x.toFixed(2)).join(' / ')}.`,
    '',
    '| attack | PUT | reload | survived | legit client (<1 s) | RSS before → after (MB) | 5xx | note |',
    '|---|---|---|---|---|---|---|---|',
    ...r.outcomes.map((a) => `| ${a.attack} | ${a.put || '-'} | ${a.reload || '-'} | ${a.survived ? 'yes' : 'NO'} | ${a.served ? `yes (${a.servedMs.toFixed(0)} ms)` : 'no'} | ${mb(a.rssBeforeMb)} → ${mb(a.rssAfterMb)} | ${a.fiveXX} | ${a.note} |`),
    '',
    `Reloads: ${r.reloads.warmUps} warm-up, then ${r.reloads.count} in ${r.reloads.seconds.toFixed(1)} s: RSS ${mb(r.reloads.rssBeforeMb)} → ${mb(r.reloads.rssAfterMb)} MB`
      + ` (${mb(r.reloads.rssAfterMb - r.reloads.rssBeforeMb)} MB), survived: ${r.reloads.survived ? 'yes' : 'NO'}, legit client served after: ${r.reloads.served ? 'yes' : 'no'}.`,
    `Stopped and started again on its stored file: ${r.bootsAfterRestart ? 'boots' : 'does NOT boot'}.`,
  ];
  return lines.join('\n') + '\n';
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string) => { const i = process.argv.indexOf(name); return i >= 0 ? process.argv[i + 1] : undefined; };
  const report = await runConfigAttacks({ tree: arg('--tree'), reloads: Number(arg('--reloads') ?? 100) });
  const md = markdown(report);
  process.stdout.write(md);
  if (process.argv.includes('--write')) {
    const file = join(HERE, 'bench/results', `attacks-config-${new Date().toISOString().slice(0, 10)}.md`);
    await writeFile(file, `# Config attacks (issue 27.4), ${new Date().toISOString().slice(0, 10)}\n\n\`node bench/attacks/config.ts --write\`\n\n${md}`);
    process.stderr.write(`written: ${file}\n`);
  }
}
