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
 * Pids of the processes below `parent` (default: this test process, whose in-process service spawns
 * them; other tests on the machine run their own) whose command line passes `match`. Descendants,
 * not only children: a child confined with namespaces runs its program two levels down (the
 * wrapper, the pid namespace's init; their command lines keep only the wrapper's name).
 */
export function childPids(match: (cmdline: string) => boolean, parent = process.pid): number[] {
  const kids = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // `pid (comm) state ppid ...`: the comm may hold spaces and parentheses
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      kids.set(ppid, [...(kids.get(ppid) ?? []), Number(name)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const visit = (pid: number) => {
    for (const k of kids.get(pid) ?? []) {
      try {
        if (match(readFileSync(`/proc/${k}/cmdline`, 'utf8'))) out.push(k);
      } catch {
        // gone meanwhile
      }
      visit(k);
    }
  };
  visit(parent);
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

/** The parent of `pid` (from /proc), and its command name; undefined when gone. */
function parentOf(pid: number): { ppid: number; comm: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    return { ppid: Number(stat.slice(close + 2).split(' ')[1]), comm: stat.slice(stat.indexOf('(') + 1, close) };
  } catch {
    return undefined;
  }
}

/**
 * The process that started `pid` through the children service: its parent, or, for a program
 * confined with namespaces, the parent of the confinement's wrapper (the wrapper and the pid
 * namespace's init stand between; their command name is the wrapper's, cut to 15 characters).
 */
export function starterOf(pid: number): number | undefined {
  let p = parentOf(pid)?.ppid;
  while (p !== undefined && p > 1 && readComm(p)?.startsWith('media-core-conf')) p = parentOf(p)?.ppid;
  return p;
}

function readComm(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** A TCP port free on 127.0.0.1 now (bound and released: a config that names a port needs one). */
export async function freeTcp(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}
