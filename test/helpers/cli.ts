import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../core/main.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

export interface Cli {
  child: ChildProcess;
  /** The URL the CLI printed. */
  url: string;
  /** The exit code, once it exited. */
  exited: Promise<number | null>;
  stderr(): string;
}

/** Runs the CLI (`core/main.ts`) as a new OS process, waits for its URL; killed at teardown. */
export async function runCli(t: { teardown(fn: () => unknown): void }, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Cli> {
  const child = spawn(process.execPath, ['--import', TSX, MAIN, ...args], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
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
