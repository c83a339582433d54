import type { SrtRawStats } from './native.ts';

/**
 * A publisher quiet for this long (no media delivered) is asked whether it is still there: one
 * MPEG-TS null packet is sent to it, which its libsrt acknowledges if it is. A publisher that
 * leaves without a word (killed, or its network gone) sends nothing at all, and libsrt would only
 * break it after 16 expiry periods (about 5 s, or `srt.idle_timeout_seconds`, 10 s, by default):
 * its readers on every protocol waited as long (issue 44.3; the reference breaks a silent SRT peer
 * after 2 s). A publisher that is only quiet (its source stalls) answers and stays, up to the idle timeout.
 */
export const PUBLISHER_QUIET_MS = 1000;
/** How long an answer to the probe may take, beyond twice the connection's round trip. */
export const PROBE_ANSWER_MS = 1000;

/** One MPEG-TS null packet (PID 0x1fff): every demuxer skips it. */
const NULL_PACKET = Buffer.alloc(188, 0xff);
NULL_PACKET.set([0x47, 0x1f, 0xff, 0x10]);

interface Seen {
  /** Bytes received at the last look (-1: none yet) and when that count last moved. */
  bytes: number;
  since: number;
  /** A probe in flight: when it was sent and the peer's ACK count then. */
  probe?: { at: number; acks: number; waitMs: number };
  /** When the last probe was answered (the next one waits another quiet period). */
  answered?: number;
}

export interface MediaWatchOptions {
  /** No first media within this long after the handshake: closed. */
  handshakeMs: number;
  /** No media for this long: closed, even if it answers probes. */
  idleMs: number;
  /** Sends to a socket (the probe); bytes taken. */
  send(sock: number, data: Buffer): number;
  stats(sock: number): SrtRawStats | null;
}

/**
 * The publishers' media timeouts and liveness: which publishers to close, and why. `check` runs
 * on the relay's sweep with each publisher's received byte count.
 */
export class MediaWatch {
  readonly #o: MediaWatchOptions;
  readonly #seen = new Map<number, Seen>();

  constructor(o: MediaWatchOptions) {
    this.#o = o;
  }

  add(sock: number, now = Date.now()): void {
    this.#seen.set(sock, { bytes: -1, since: now });
  }

  delete(sock: number): void {
    this.#seen.delete(sock);
  }

  /**
   * The publishers to close now, each with the reason; `received` gives a socket's byte count
   * (undefined: the connection is gone, it is forgotten).
   */
  check(now: number, received: (sock: number) => number | undefined): Array<{ sock: number; why: string }> {
    const out: Array<{ sock: number; why: string }> = [];
    for (const [sock, seen] of this.#seen) {
      const bytes = received(sock);
      if (bytes === undefined) { this.#seen.delete(sock); continue; }
      if (bytes > 0 && bytes !== seen.bytes) {
        seen.bytes = bytes;
        seen.since = now;
        seen.probe = undefined;
        seen.answered = undefined;
        continue;
      }
      const why = this.#verdict(sock, seen, now);
      if (why) out.push({ sock, why });
    }
    return out;
  }

  #verdict(sock: number, seen: Seen, now: number): string | undefined {
    const started = seen.bytes >= 0;
    const limit = started ? this.#o.idleMs : this.#o.handshakeMs;
    if (now - seen.since >= limit) return started ? `no media for ${limit / 1000} s` : `no media within ${limit / 1000} s of the handshake`;
    if (!started) return undefined;
    if (seen.probe) {
      if (this.#acks(sock) > seen.probe.acks) {
        seen.probe = undefined;
        seen.answered = now;
        return undefined;
      }
      return now - seen.probe.at >= seen.probe.waitMs ? `no media for ${((now - seen.since) / 1000).toFixed(1)} s and no answer: the publisher is gone` : undefined;
    }
    if (now - Math.max(seen.since, seen.answered ?? 0) >= PUBLISHER_QUIET_MS) this.#probe(sock, seen, now);
    return undefined;
  }

  #probe(sock: number, seen: Seen, now: number): void {
    const acks = this.#acks(sock);
    const rtt = Number(this.#o.stats(sock)?.msRTT ?? 0);
    if (this.#o.send(sock, NULL_PACKET) <= 0) return;
    seen.probe = { at: now, acks, waitMs: PROBE_ANSWER_MS + 2 * (Number.isFinite(rtt) ? rtt : 0) };
  }

  #acks(sock: number): number {
    return Number(this.#o.stats(sock)?.pktRecvACKTotal ?? 0);
  }

  clear(): void {
    this.#seen.clear();
  }
}
