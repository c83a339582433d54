import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** IPC with a bench child: waits for the first message that matches, with a deadline. */
export type Message = Record<string, unknown>;

export class Child {
  readonly proc: ChildProcess;
  private waiters = new Set<{ match: (m: Message) => boolean; done: (m: Message) => void }>();
  private exited = false;

  constructor(file: string, args: string[]) {
    this.proc = fork(file, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.proc.on('message', (m: Message) => {
      if ('error' in m) console.error(`child ${file}: ${JSON.stringify(m)}`);
      for (const w of this.waiters) if (w.match(m)) { this.waiters.delete(w); w.done(m); }
    });
    this.proc.once('exit', () => { this.exited = true; });
  }

  get pid(): number { return this.proc.pid ?? 0; }

  send(m: Message): void { if (!this.exited) this.proc.send(m); }

  next(match: (m: Message) => boolean, ms: number, what: string): Promise<Message> {
    return new Promise((resolve, reject) => {
      const w = { match, done: (m: Message) => { clearTimeout(timer); resolve(m); } };
      const timer = setTimeout(() => { this.waiters.delete(w); reject(new Error(`timeout: ${what}`)); }, ms);
      this.waiters.add(w);
    });
  }

  /** Asks the child to exit and waits (SIGKILL after 5 s). */
  async stop(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((r) => this.proc.once('exit', () => r()));
    this.send({ exit: true });
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(timer);
  }
}

const TICKS = 100; // USER_HZ

/** utime + stime of a process (all its threads), in seconds. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICKS;
}

export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

export function threads(pid: number): number {
  const m = /Threads:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

export function quantile(values: number[], q: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Host candidates on 127.0.0.1 only: every other candidate line leaves the SDP. */
export function loopbackOnly(sdp: string): string {
  return sdp.split(/\r?\n/).filter((l) => !l.startsWith('a=candidate:') || / 127\.0\.0\.1 /.test(l)).join('\r\n');
}

/**
 * The server's offer as `a=setup:active`: the server is the DTLS client, as a WHEP server that
 * answers `active` is, and the viewer is the DTLS server, ready before the first ClientHello comes.
 * Left at actpass, the viewer (answerer) picks active and sends its ClientHello while the server
 * may still be waiting for the relayed answer; the hello is lost and DTLS retransmits after 1 s.
 */
export function serverDtlsClient(offer: string): string {
  return offer.replace(/a=setup:actpass/g, 'a=setup:active');
}
