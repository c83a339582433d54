import { readdir, readFile, readlink } from 'node:fs/promises';
import type { ConfigData } from './config-data.ts';
import { listenersOf, type KeptPorts, type Listener } from './listeners.ts';

/** What the running service listens on: its ports (main, serving threads, HTTPS, RTMP(S), SRT) and listeners. */
export interface HeldPorts {
  tcp: ReadonlySet<number>;
  udp: ReadonlySet<number>;
  /** The running config's listeners (API ports as bound): one the new config keeps as it is is not tried again. */
  listeners?: readonly Listener[];
}

/**
 * The ports the running service holds: the non-zero ports its config (`running`, the config the
 * app was built with) names for its listeners, which it bound at its start (also those a child of
 * it holds: the SRT host process binds `srt.address`), and, on Linux, from `/proc` the sockets of
 * `/proc/net/{tcp,tcp6}` in state LISTEN and of `/proc/net/{udp,udp6}` whose inode is one of this
 * process's file descriptors (worker threads share them), so ports bound to "port 0" count too.
 * `kept`: the API's ports now (where `running` says port 0).
 */
export async function heldPorts(running: ConfigData, kept: KeptPorts = {}): Promise<HeldPorts> {
  const listeners = listenersOf(running, kept);
  const tcp = new Set<number>();
  const udp = new Set<number>();
  for (const l of listeners) if (l.port !== 0) (l.proto === 'tcp' ? tcp : udp).add(l.port);
  try {
    const inodes = await ownSocketInodes();
    const [tcp4, tcp6, udp4, udp6] = await Promise.all(['tcp', 'tcp6', 'udp', 'udp6'].map((f) => readFile(`/proc/net/${f}`, 'utf8')));
    for (const p of [...portsOf(tcp4!, inodes, LISTEN), ...portsOf(tcp6!, inodes, LISTEN)]) tcp.add(p);
    for (const p of [...portsOf(udp4!, inodes), ...portsOf(udp6!, inodes)]) udp.add(p);
  } catch {
    // no /proc: the config's ports alone
  }
  return { tcp, udp, listeners };
}

/** `st` of a listening TCP socket in /proc/net/tcp. */
const LISTEN = '0A';

async function ownSocketInodes(): Promise<Set<string>> {
  const inodes = new Set<string>();
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m) inodes.add(m[1]!);
  }
  return inodes;
}

/** Local ports of the table's sockets owned by this process (`state`: only sockets in that state). */
function portsOf(table: string, inodes: ReadonlySet<string>, state?: string): number[] {
  const ports: number[] = [];
  for (const line of table.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || !inodes.has(f[9]!)) continue;
    if (state !== undefined && f[3] !== state) continue;
    const port = parseInt(f[1]!.split(':')[1] ?? '', 16);
    if (Number.isInteger(port) && port > 0) ports.push(port);
  }
  return ports;
}
