import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { fileURLToPath } from 'node:url';
import { FFMPEG, SOURCE } from '../../test/plugins/srt/srt-helpers.ts';
import type { Credentials, Job } from './srt-attacker.ts';

/**
 * The clients of bench/attacks/srt.ts besides the raw UDP flood: the legitimate ffmpeg publisher
 * and player (from 127.0.0.1), and the attacker process (srt-attacker.ts) with its IPC.
 */

const ATTACKER = fileURLToPath(new URL('./srt-attacker.ts', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A UDP port free on loopback just now (the service is told to listen on it). */
export function freeUdpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createSocket('udp4');
    s.once('error', reject);
    s.bind(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export const publishId = (name: string, token: string) => `${name},mode:publish,token:${encodeURIComponent(token)}`;

function srtUrl(port: number, streamid: string, passphrase: string): string {
  return `srt://127.0.0.1:${port}?mode=caller&transtype=live&latency=400000&streamid=${encodeURIComponent(streamid)}&passphrase=${passphrase}`;
}

interface Ffmpeg { child: ChildProcess; stderr(): string; done: Promise<number | null> }

function ffmpeg(args: string[], timeoutMs: number): Ffmpeg {
  const child = spawn(FFMPEG, ['-hide_banner', '-nostdin', '-loglevel', 'error', '-y', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-2000); });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<number | null>((r) => child.once('close', (code) => { clearTimeout(timer); r(code); }));
  return { child, stderr: () => err.trim(), done };
}

export interface LegitOutcome { ok: boolean; ms: number; why: string }

/**
 * A legitimate ffmpeg publisher (test pattern, H.264 in MPEG-TS, the right token and passphrase)
 * and, once the service lists it, an ffmpeg player decoding 5 frames from it; served when the
 * player got them, timed from starting the publisher.
 */
export async function legitClient(apiUrl: string, port: number, name: string, right: Credentials): Promise<LegitOutcome> {
  const t0 = performance.now();
  const pub = ffmpeg([...SOURCE, '-f', 'mpegts', srtUrl(port, publishId(name, right.token), right.passphrase)], 60_000);
  const ms = () => Math.round(performance.now() - t0);
  try {
    const deadline = Date.now() + 20_000;
    let listed = false;
    while (!listed && Date.now() < deadline && pub.child.exitCode === null) {
      listed = await fetch(`${apiUrl}/api/v3/srt`, { signal: AbortSignal.timeout(2000) })
        .then((r) => r.json() as Promise<{ publisher?: Record<string, unknown> }>)
        .then((b) => b.publisher?.[name] !== undefined, () => false);
      if (!listed) await sleep(100);
    }
    if (!listed) return { ok: false, ms: ms(), why: `publisher not listed within 20 s ${pub.stderr()}`.trim() };
    const play = ffmpeg(['-analyzeduration', '1000000', '-i', srtUrl(port, `${name},token:${encodeURIComponent(right.token)}`, right.passphrase), '-frames:v', '5', '-f', 'null', '-'], 30_000);
    const code = await play.done;
    return { ok: code === 0, ms: ms(), why: code === 0 ? '' : `player exited ${code}: ${play.stderr()}` };
  } finally {
    pub.child.kill('SIGKILL');
    await pub.done;
  }
}

export interface AttackerProcess<R> {
  /** Resolves when a holding job has opened its connections. */
  opened: Promise<void>;
  /** Its result, once it stopped (a guessing job: after `stop` and its minimum of guesses). */
  result(): Promise<R>;
  /** Tells it to stop; its result follows. */
  stop(): void;
  kill(): void;
}

/** Starts the attacker process with `job`. */
export function attacker<R>(job: Job): AttackerProcess<R> {
  const child = spawn(process.execPath, [ATTACKER, JSON.stringify(job)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let opened!: () => void;
  const openedP = new Promise<void>((r) => { opened = r; });
  const resultP = new Promise<R>((resolve, reject) => {
    child.on('message', (m: { type: string }) => {
      if (m.type === 'opened') opened();
      else if (m.type === 'result') resolve(m as R);
    });
    child.once('exit', (code, signal) => reject(new Error(`the attacker exited (${code ?? signal}) without a result`)));
  });
  resultP.catch(() => {});
  return {
    opened: openedP,
    result: () => resultP,
    stop: () => { if (child.connected) child.send('stop'); },
    kill: () => { child.kill('SIGKILL'); },
  };
}
