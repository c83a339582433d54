import { spawn, type ChildProcess } from 'node:child_process';
import { chown, mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanEnv, testThreads, type TestLike } from './app.ts';
import { deepMerge } from '../../core/config/schema-walk.ts';

const MAIN = fileURLToPath(new URL('../../app/main.ts', import.meta.url));

export interface CliApp {
  child: ChildProcess;
  /** `http://127.0.0.1:<port>` */
  url: string;
  dir: string;
  /** `VmRSS` and `VmHWM` (peak) of the service process, in bytes, from /proc. */
  memory(): { rss: number; peak: number };
}

/**
 * Runs the service as its own OS process (the CLI) with a temp config merged over the test
 * defaults, so clients in the test process and the server do not share an event loop, and the
 * server's memory can be read from /proc. Killed and removed at teardown.
 */
export async function startCli(t: TestLike, config: Record<string, unknown> = {}, opts: { env?: NodeJS.ProcessEnv; /** Run as this user (and group), owning its folder: root only. */ uid?: number } = {}): Promise<CliApp> {
  const dir = await mkdtemp(join(tmpdir(), 'core-cli-'));
  await mkdir(join(dir, 'disk'), { recursive: true });
  const base = {
    address: '127.0.0.1:0', db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } },
    log: { level: 'info' }, update_check: false,
    // the default is auto: pinned, so the suite is the same on every machine (see helpers/app.ts)
    http: { threads: testThreads() },
  };
  const configPath = join(dir, 'config.json');
  await writeFile(configPath, JSON.stringify(deepMerge(base, config)));
  if (opts.uid !== undefined) for (const p of [dir, join(dir, 'disk'), configPath]) await chown(p, opts.uid, opts.uid);
  const as = opts.uid === undefined ? {} : { uid: opts.uid, gid: opts.uid };
  const child = spawn(process.execPath, [MAIN, '--config', configPath], { cwd: dir, env: cleanEnv(opts.env), stdio: ['ignore', 'ignore', 'pipe'], ...as });
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await gone;
    }
    await rm(dir, { recursive: true, force: true });
  });
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed: ${err}`)), 60_000);
    child.stderr!.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-20_000);
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) { clearTimeout(timer); resolve(m[1]!); }
    });
    child.once('exit', () => { clearTimeout(timer); reject(new Error(`exited early: ${err}`)); });
  });
  const memory = () => {
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  };
  return { child, url, dir, memory };
}

export interface Cli {
  child: ChildProcess;
  /** The URL the CLI printed. */
  url: string;
  /** The exit code, once it exited. */
  exited: Promise<number | null>;
  stderr(): string;
}

/** Runs the CLI (`app/main.ts`) as a new OS process, waits for its URL; killed at teardown. */
export async function runCli(t: { teardown(fn: () => unknown): void }, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Cli> {
  const child = spawn(process.execPath, [MAIN, ...args], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); });
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`no URL printed: ${err}`)), 60_000);
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) { clearTimeout(timer); res(m[1]!); }
    });
    child.on('exit', () => { clearTimeout(timer); rej(new Error(`exited early: ${err}`)); });
  });
  return { child, url, exited, stderr: () => err };
}
