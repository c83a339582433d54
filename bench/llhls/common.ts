import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** What the LL-HLS benches (`streams.ts`, `clients.ts`, `glass.ts`) share: arguments, ports, the sample, the run's facts. */

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const args = process.argv.slice(2);

/** `--name value`, or `def`. */
export function opt(name: string, def: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] && !args[i + 1]!.startsWith('--') ? args[i + 1]! : def;
}

/** `--write [tag]`: whether to write the result file, and its name's suffix. */
export const WRITE = args.includes('--write');
export const TAG = WRITE && opt('write', '') ? `-${opt('write', '')}` : '';

const TICK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim());

/** CPU seconds (user + system) a process used so far, from /proc; 0 once it is gone. */
export function cpuOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / TICK;
  } catch {
    return 0;
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const uptime = () => spawnSync('uptime', { encoding: 'utf8' }).stdout.trim();
export const head = () => spawnSync('git', ['-C', ROOT, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).stdout.trim().slice(0, 100);

/** A loopback port nothing listens on now (the service's RTMP listener). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Ten seconds of 320x240 25 fps H.264 (300 kbit/s, a keyframe every 2 s) and AAC 64 kbit/s, in MPEG-TS, looped by the publishers. */
export function makeSample(file: string): void {
  const r = spawnSync('ffmpeg', [
    '-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440',
    '-t', '10', '-c:v', 'libx264', '-preset', 'ultrafast', '-b:v', '300k', '-g', '50', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '64k', file,
  ], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('ffmpeg could not make the sample');
}

/** A JSON request to the service's API; throws on an error status. */
export async function api(url: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const r = await fetch(url + path, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
  return r.headers.get('content-type')?.includes('json') ? r.json() : r.text();
}

/**
 * A checkout of `rev` beside this one (a detached git worktree in the temp folder) for a
 * before/after run: this tree's node_modules copied as links (its own packages link into it) and
 * its built native parts copied; `remove()` drops it. Built by `buildCheckout` as deployed.
 */
export function checkoutOf(rev: string): { root: string; remove(): void } {
  const root = join(tmpdir(), `bench-llhls-${rev.replace(/[^\w.-]/g, '_')}-${process.pid}`);
  const run = (cmd: string, args: string[]) => {
    const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed`);
  };
  run('git', ['-C', ROOT, 'worktree', 'add', '--detach', root, rev]);
  run('cp', ['-a', join(ROOT, 'node_modules'), join(root, 'node_modules')]);
  for (const built of ['core/process/confine/build', 'core/runtime/trim/build', 'plugins/srt/addon/build']) {
    if (existsSync(join(ROOT, built))) run('cp', ['-a', join(ROOT, built), join(root, built)]);
  }
  return { root, remove: () => run('git', ['-C', ROOT, 'worktree', 'remove', '--force', root]) };
}
