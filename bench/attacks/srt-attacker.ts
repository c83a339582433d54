import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * The SRT attackers of bench/attacks/srt.ts, in their own OS process: the plugin's addon in caller
 * mode connects synchronously (it blocks its thread for each handshake), so the runner, which
 * samples RSS and polls the API meanwhile, stays free. Started with one job as JSON; talks over
 * IPC: sends `{ type: 'opened' }` when a holding job has opened its connections, takes `'stop'`,
 * then sends `{ type: 'result', ... }` and kills itself: the connections it holds vanish without a
 * goodbye (closing hundreds one by one takes minutes; an attacker would not bother either).
 *
 *   node bench/attacks/srt-attacker.ts '<job as JSON>'     (with an IPC channel)
 */

export interface Credentials { token: string; passphrase: string }

export type Job =
  /** Wrong tokens or passphrases from `from`, as fast as one caller goes, until stopped (at least `min`). */
  | { kind: 'guess'; port: number; what: 'token' | 'passphrase'; from: string; other: string; min: number; right: Credentials }
  /** `n` publishers (`prefix` + i) with the right credentials, round-robin over `from`, held silent until stopped. */
  | { kind: 'hold'; port: number; n: number; from: string[]; prefix: string; right: Credentials }
  /** One publisher per stream name (raw streamid resource), round-robin over `from`, each held until stopped. */
  | { kind: 'names'; port: number; names: string[]; from: string[]; right: Credentials };

/** `'accepted'`, or libsrt's reject code (-1: failed without one). */
export type Outcome = 'accepted' | number;

export interface GuessResult { type: 'result'; tally: Record<string, number>; seconds: number; sameAfter: Outcome; otherAfter: Outcome }
export interface HoldResult { type: 'result'; tally: Record<string, number>; openSeconds: number }
export interface NamesResult { type: 'result'; outcomes: Array<{ name: string; outcome: Outcome }> }

interface Caller { id: number; stop(): void }
type Addon = { SrtServer: new (o: object, f: () => void) => { start(): number; stop(): void } };

const ADDON = fileURLToPath(new URL('../../plugins/srt/addon/build/Release/srt_addon.node', import.meta.url));
const publish = (name: string, token: string) => `${name},mode:publish,token:${encodeURIComponent(token)}`;
const tick = () => new Promise((r) => setImmediate(r));

let addon: Addon | undefined;

/** Connects: the connection, or the reject code. */
function call(port: number, from: string, streamid: string, passphrase: string): Caller | number {
  addon ??= createRequire(import.meta.url)(ADDON) as Addon;
  const opts = { host: '127.0.0.1', port, latencyMs: 120, passphrase, token: '', queue: 64, streamid, localHost: from };
  const sock = new addon.SrtServer(opts, () => {});
  try {
    return { id: sock.start(), stop: () => sock.stop() };
  } catch (err) {
    return (err as { reject?: number }).reject ?? -1;
  }
}

/** Tries once and lets go at once. */
function once(port: number, from: string, streamid: string, passphrase: string): Outcome {
  const c = call(port, from, streamid, passphrase);
  if (typeof c === 'number') return c;
  c.stop();
  return 'accepted';
}

const count = (tally: Record<string, number>, o: Outcome) => { tally[String(o)] = (tally[String(o)] ?? 0) + 1; };

async function guess(job: Extract<Job, { kind: 'guess' }>, stopped: () => boolean): Promise<GuessResult> {
  const tally: Record<string, number> = {};
  const t0 = performance.now();
  for (let i = 0; i < job.min || !stopped(); i++) {
    const token = job.what === 'token' ? `guess-${i}` : job.right.token;
    // libsrt takes passphrases of 10 to 79 characters; a shorter one would go unencrypted
    const passphrase = job.what === 'passphrase' ? `wrong-passphrase-${i}` : job.right.passphrase;
    count(tally, once(job.port, job.from, publish(`guess-${i % 4}`, token), passphrase));
    if (i % 4 === 3) await tick();
  }
  const seconds = (performance.now() - t0) / 1000;
  const right = publish('right-after-guesses', job.right.token);
  return {
    type: 'result', tally, seconds,
    sameAfter: once(job.port, job.from, right, job.right.passphrase),
    otherAfter: once(job.port, job.other, right, job.right.passphrase),
  };
}

async function holdMany(job: Extract<Job, { kind: 'hold' }>, stopped: Promise<void>): Promise<HoldResult> {
  const tally: Record<string, number> = {};
  const t0 = performance.now();
  for (let i = 0; i < job.n; i++) {
    const c = call(job.port, job.from[i % job.from.length]!, publish(`${job.prefix}${i}`, job.right.token), job.right.passphrase);
    count(tally, typeof c === 'number' ? c : 'accepted');
    if (i % 10 === 9) await tick();
  }
  const openSeconds = (performance.now() - t0) / 1000;
  process.send!({ type: 'opened' });
  await stopped;
  return { type: 'result', tally, openSeconds };
}

async function names(job: Extract<Job, { kind: 'names' }>, stopped: Promise<void>): Promise<NamesResult> {
  const outcomes = job.names.map((name, i) => {
    const c = call(job.port, job.from[i % job.from.length]!, publish(name, job.right.token), job.right.passphrase);
    return { name, outcome: typeof c === 'number' ? c : 'accepted' as const };
  });
  process.send!({ type: 'opened' });
  await stopped;
  return { type: 'result', outcomes };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const job = JSON.parse(process.argv[2]!) as Job;
  let stop!: () => void;
  let isStopped = false;
  const stopped = new Promise<void>((r) => { stop = r; });
  process.on('message', (m) => { if (m === 'stop') { isStopped = true; stop(); } });
  const result = job.kind === 'guess' ? await guess(job, () => isStopped)
    : job.kind === 'hold' ? await holdMany(job, stopped) : await names(job, stopped);
  process.send!(result, () => process.kill(process.pid, 'SIGKILL'));
}
