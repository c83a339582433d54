import { spawn } from 'node:child_process';
import type { ChildrenService } from '../../sdk/index.ts';

/** How a short run is started: the core's confined spawn in the service, node's own in unit tests. */
export type Spawn = ChildrenService['spawn'];

export const directSpawn: Spawn = (file, args, o = {}) =>
  spawn(file, args, { stdio: o.stdio ?? ['ignore', 'ignore', 'pipe'], env: o.env ?? {}, signal: o.signal, killSignal: o.killSignal });

export interface Collected {
  stdout: string;
  stderr: string;
  /** Set when it could not run or was cut off (timeout, output over the cap); a non-zero exit is not an error. */
  error?: string;
}

const MAX_BYTES = 16 * 1024 * 1024;

/**
 * Runs a program to its end and collects what it printed, like `execFile` but through `run`
 * (so it is confined like every child). Never rejects.
 */
export function runCollect(run: Spawn, file: string, args: readonly string[], timeoutMs: number): Promise<Collected> {
  return new Promise((resolve) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let bytes = 0;
    let error: string | undefined;
    let child;
    try {
      child = run(file, args, { stdio: ['ignore', 'pipe', 'pipe'], env: {} });
    } catch (e) {
      resolve({ stdout: '', stderr: '', error: `${file} ${args.join(' ')}: ${(e as Error).message}` });
      return;
    }
    const stop = (why: string) => {
      error ??= `${file} ${args.join(' ')}: ${why}`;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop(`timed out after ${timeoutMs} ms`), timeoutMs);
    const take = (into: Buffer[]) => (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_BYTES) stop('too much output');
      else into.push(chunk);
    };
    child.stdout!.on('data', take(out));
    child.stderr!.on('data', take(err));
    child.on('error', (e) => { error ??= `${file} ${args.join(' ')}: ${e.message}`; });
    child.on('close', (code) => {
      clearTimeout(timer);
      // the wrapper's own failures (nothing ran) come as 126/127 with its message on stderr
      const stderr = Buffer.concat(err).toString('utf8');
      if (!error && (code === 126 || code === 127) && stderr.startsWith('media-core-confine:')) error = stderr.trim();
      resolve({ stdout: Buffer.concat(out).toString('utf8'), stderr, error });
    });
  });
}
