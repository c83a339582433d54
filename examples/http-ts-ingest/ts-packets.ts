/** Bytes of one MPEG-TS packet. */
export const TS_PACKET = 188;

/**
 * Cuts a publisher's body (HTTP chunks of any size) into whole 188-byte TS packets, as the stream
 * table carries them. An aligned chunk goes on as it is (no copy); only a packet split across two
 * chunks is copied.
 */
export class TsPackets {
  #rest: Buffer | undefined;

  /** The whole packets now complete (undefined when none). */
  take(chunk: Buffer): Buffer | undefined {
    const data = this.#rest ? Buffer.concat([this.#rest, chunk]) : chunk;
    const whole = data.length - (data.length % TS_PACKET);
    this.#rest = whole < data.length ? Buffer.from(data.subarray(whole)) : undefined;
    return whole > 0 ? data.subarray(0, whole) : undefined;
  }
}
