import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';

/** True while a process with this pid exists (signal 0 only checks). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Pids of the children of `parent` (default: this test process, whose in-process service spawns
 * them; other tests on the machine run their own) whose command line passes `match`.
 */
export function childPids(match: (cmdline: string) => boolean, parent = process.pid): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // `pid (comm) state ppid ...`: the comm may hold spaces and parentheses
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent && match(readFileSync(`/proc/${name}/cmdline`, 'utf8'))) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * A TCP server on a free loopback port that accepts and never sends (an input that stalls),
 * closed with its connections in teardown. `onConnection` counts or inspects the sockets.
 */
export async function silentServer(t: { teardown(fn: () => unknown): void }, onConnection?: (s: Socket) => void): Promise<number> {
  const sockets: Socket[] = [];
  const server = createServer((s) => {
    sockets.push(s);
    s.on('error', () => {});
    onConnection?.(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return (server.address() as { port: number }).port;
}
