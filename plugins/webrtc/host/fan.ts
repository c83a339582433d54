import { isRtcp, startsKeyframe } from './sdp.ts';

/** The part of a libdatachannel track the fan-out uses. */
export interface OutTrack {
  isOpen(): boolean;
  sendMessageBinary(b: Buffer): boolean;
}

/** One outgoing track of a viewer: its payload type, and whether it still waits for a keyframe. */
export interface Out { track: OutTrack; pt: number; waitKey: boolean }

/** A viewer as the fan-out sees it. */
export interface FanViewer {
  connected: boolean;
  /** Bytes sent to it (RTP and RTCP, before SRTP). */
  tx: number;
  video?: Out;
  audio?: Out;
}

/**
 * One packet of a feed to every connected viewer (pure but for the sends): the same Buffer where the
 * payload type matches, else one copy per type; video from a keyframe on; RTCP (sender reports) to
 * all. A viewer whose track throws (libdatachannel: "Track is closed", its peer went between two
 * packets) is returned, to be ended alone: the others still get the packet.
 */
export function fanOut<V extends FanViewer>(viewers: Iterable<V>, kind: 'video' | 'audio', p: Buffer): V[] | undefined {
  if (p.length < 12) return undefined;
  const rtcp = isRtcp(p);
  let key: boolean | undefined;
  let copy: Buffer | undefined;
  let gone: V[] | undefined;
  for (const s of viewers) {
    const out = s[kind];
    if (!out || !s.connected) continue;
    if (!rtcp && out.waitKey) {
      key ??= kind === 'audio' || startsKeyframe(p);
      if (!key) continue;
      out.waitKey = false;
    }
    let packet = p;
    if (!rtcp && (p[1]! & 0x7f) !== out.pt) {
      if (!copy || (copy[1]! & 0x7f) !== out.pt) {
        copy = Buffer.from(p);
        copy[1] = (p[1]! & 0x80) | out.pt;
      }
      packet = copy;
    }
    try {
      if (!out.track.isOpen()) continue;
      out.track.sendMessageBinary(packet);
      s.tx += p.length;
    } catch {
      (gone ??= []).push(s);
    }
  }
  return gone;
}
