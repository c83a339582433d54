/*
 * The host's side of the fan-out: the service's stream table decides what each SRT subscriber
 * gets (start at a random access point with PAT/PMT, one shared Buffer per chunk); here each
 * chunk is queued on the subscribers' sockets, counting what a full send buffer dropped.
 */

/** What the host keeps per subscriber: bytes queued, bytes dropped, refusals in a row. */
export interface ChannelSink {
  readonly sock: number;
  /** Bytes queued so far, and bytes dropped because its send buffer was full. */
  sent: number;
  dropped: number;
  /** Chunks in a row its send buffer refused entirely. */
  stalls?: number;
}

/** Chunks in a row a subscriber may refuse before it is dropped (about a second of media). */
export const MAX_STALLS = 250;

export type SendFn = (sock: number, data: Buffer) => number;

/**
 * Queues one chunk on a subscriber's socket. Returns true when the subscriber has refused
 * MAX_STALLS chunks in a row just now: its owner closes it (it is too slow).
 */
export function deliverChunk(sub: ChannelSink, data: Buffer, send: SendFn): boolean {
  const n = send(sub.sock, data);
  sub.sent += n;
  sub.dropped += data.length - n;
  sub.stalls = n === 0 ? (sub.stalls ?? 0) + 1 : 0;
  return sub.stalls === MAX_STALLS;
}
