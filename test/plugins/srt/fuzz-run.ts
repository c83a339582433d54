import { createSocket, type Socket } from 'node:dgram';
import { fuzzCase, type FuzzCase, type Step } from './fuzz-gen.ts';
import { DST_AT, HS, HS_COOKIE_AT, parseHandshake } from './fuzz-wire.ts';
import { srtCaller } from './srt-helpers.ts';

/*
 * Sends SRT fuzz cases (fuzz-gen.ts) to the service's UDP port, `lanes` cases at a time, each
 * from a fresh UDP socket: what the service answers is read, so a conclusion carries the SYN
 * cookie the service gave its induction and later packets go to the socket it accepted. Caller
 * cases connect a real libsrt caller (the addon's caller mode) instead.
 */

export interface FuzzRun {
  cases: number;
  /** Cases per generator. */
  byGenerator: Record<string, number>;
  /** Conclusions the service accepted (answered with its socket) and refused (a rejection code). */
  accepted: number;
  refused: number;
  /** Cases whose valid induction got no answer at all, however often sent: the service did not listen. */
  unanswered: number[];
  /** Set when the run stopped early (`stop()` returned true): the index of the case being started. */
  stoppedAt?: number;
  /** The case indices in flight when the run stopped (one of them, or one before, did it). */
  inFlight: number[];
}

export interface FuzzOptions {
  port: number;
  seed: number;
  cases: number;
  lanes?: number;
  /** First case index (to replay a range). */
  from?: number;
  /** Source address of the datagrams (so their connections count against their own address). */
  localAddress?: string;
  /** Socket ids of the legitimate clients, for packets aimed at them. */
  legit?: () => number[];
  /** Only these generators (GENERATORS names; all when unset). */
  only?: readonly string[];
  /** Polled between cases; true stops the run (e.g. the service exited). */
  stop?: () => boolean;
}

export interface Outcome { accepted: number; refused: number; unanswered: boolean }

/** What one case's socket learnt from the service's answers. */
class Peer {
  answers = 0;
  cookie: number | undefined;
  socket: number | undefined;
  out: Outcome = { accepted: 0, refused: 0, unanswered: false };
  #wake: (() => void) | undefined;

  onAnswer = (m: Buffer): void => {
    this.answers++;
    const h = parseHandshake(m);
    if (h?.type === HS.induction) this.cookie = h.cookie;
    else if (h?.type === HS.conclusion) { this.socket = h.socket; this.out.accepted++; }
    // a refusal's type is 1000 + its reason (libsrt's, or the listener callback's 1000 + 401 and such)
    else if (h && h.type >= 1000 && h.type < HS.agreement) this.out.refused++;
    this.#wake?.();
  };

  /** Resolves at the next answer after `seen`, or after `ms`. */
  answer(seen: number, ms: number): Promise<void> {
    if (this.answers > seen) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => { this.#wake = undefined; resolve(); }, ms);
      this.#wake = () => { clearTimeout(timer); this.#wake = undefined; resolve(); };
    });
  }
}

/** The step's bytes with the cookie and destination patched in from what the service said. */
function patched(s: Step, p: Peer, legit: number[]): Buffer {
  const b = Buffer.from(s.bytes);
  if (s.cookie && p.cookie !== undefined && b.length >= HS_COOKIE_AT + 4) b.writeUInt32BE(p.cookie >>> 0, HS_COOKIE_AT);
  if (s.toPeer && p.socket !== undefined) b.writeUInt32BE(p.socket >>> 0, DST_AT);
  if (s.toLegit && legit.length > 0) b.writeUInt32BE(legit[b.length % legit.length]! >>> 0, DST_AT);
  return b;
}

const send = (sock: Socket, b: Buffer, port: number) => new Promise<void>((resolve) => sock.send(b, port, '127.0.0.1', () => resolve()));

/** One case from a fresh socket; resolves once the socket is closed. */
export async function sendCase(o: Pick<FuzzOptions, 'port' | 'localAddress' | 'legit'>, c: FuzzCase): Promise<Outcome> {
  const sock = createSocket('udp4');
  const p = new Peer();
  sock.on('message', p.onAnswer);
  sock.on('error', () => {});
  try {
    await new Promise<void>((resolve) => sock.bind(0, o.localAddress ?? '127.0.0.1', resolve));
    const legit = o.legit?.() ?? [];
    for (const s of c.steps) {
      const b = patched(s, p, legit);
      for (let attempt = 1; ; attempt++) {
        const seen = p.answers;
        await send(sock, b, o.port);
        if (!s.awaitMs) break;
        await p.answer(seen, s.awaitMs);
        if (p.answers > seen || !s.retry) break;
        // a real caller sends its induction again every 250 ms; 8 times unanswered: the service is deaf
        if (attempt === 8) { p.out.unanswered = true; return p.out; }
      }
    }
    if (c.holdMs) await new Promise((r) => setTimeout(r, c.holdMs));
    return p.out;
  } finally {
    sock.close();
  }
}

/** A real libsrt caller; the addon's connect blocks this thread for the handshake. */
function callCase(port: number, c: NonNullable<FuzzCase['caller']>): Outcome {
  try {
    srtCaller(port, c.streamid, c.passphrase).stop();
    return { accepted: 1, refused: 0, unanswered: false };
  } catch {
    return { accepted: 0, refused: 1, unanswered: false };
  }
}

export async function runFuzz(o: FuzzOptions): Promise<FuzzRun> {
  const from = o.from ?? 0;
  const run: FuzzRun = { cases: 0, byGenerator: {}, accepted: 0, refused: 0, unanswered: [], inFlight: [] };
  const flying = new Set<number>();
  let next = from;
  const lane = async () => {
    while (next < from + o.cases && run.stoppedAt === undefined) {
      const i = next++;
      if (o.stop?.()) { run.stoppedAt = i; run.inFlight = [...flying].sort((a, b) => a - b); return; }
      const c = fuzzCase(o.seed, i, o.only);
      run.byGenerator[c.generator] = (run.byGenerator[c.generator] ?? 0) + 1;
      flying.add(i);
      const out = c.caller ? callCase(o.port, c.caller) : await sendCase(o, c);
      flying.delete(i);
      run.accepted += out.accepted;
      run.refused += out.refused;
      if (out.unanswered) run.unanswered.push(i);
      run.cases++;
    }
  };
  await Promise.all(Array.from({ length: o.lanes ?? 16 }, lane));
  return run;
}
