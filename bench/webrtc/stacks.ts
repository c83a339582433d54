import { createRequire } from 'node:module';
import { join } from 'node:path';

/**
 * The WebRTC stacks under comparison (issue 33, point 2), loaded from a scratch install outside the
 * repository (WEBRTC_EVAL_MODULES=<folder>/node_modules) so nothing enters package.json before the
 * choice. Only the narrow part of each API the bench uses is typed here.
 */
export type StackName = 'werift' | 'ndc' | 'wrtc';

export const VIDEO_PT = 96;
export const AUDIO_PT = 111;
export const VIDEO_SSRC = 0x11223344;
export const AUDIO_SSRC = 0x55667788;

/** One sending peer: the server's side of a viewer. */
export interface SendPeer {
  /** The complete offer (ICE gathering done: non-trickle). */
  offer(): Promise<string>;
  accept(answerSdp: string): Promise<void>;
  close(): void;
}

/** The server's media: one source of RTP packets, fanned out to every peer. */
export interface SendStack {
  peer(): SendPeer;
  video(packet: Buffer): void;
  audio(packet: Buffer): void;
}

export function evalRequire(): NodeJS.Require {
  const dir = process.env.WEBRTC_EVAL_MODULES;
  if (!dir) throw new Error('set WEBRTC_EVAL_MODULES to the node_modules folder holding the stacks');
  return createRequire(join(dir, 'bench-loader.js'));
}

/** Time to first callback, with a deadline. */
export function waitFor<T>(ms: number, what: string, start: (done: (v: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timeout: ${what}`)), ms);
    start((v) => { clearTimeout(timer); resolve(v); });
  });
}

// ---- werift (pure TypeScript) ----------------------------------------------------------------
interface WeriftTrack { writeRtp(packet: Buffer): void }
interface WeriftDescription { sdp: string; type: string }
interface WeriftPc {
  addTransceiver(track: WeriftTrack, init: { direction: string }): void;
  createOffer(): Promise<WeriftDescription>;
  setLocalDescription(d: WeriftDescription): Promise<unknown>;
  setRemoteDescription(d: { type: string; sdp: string }): Promise<unknown>;
  readonly localDescription: WeriftDescription | null;
  close(): Promise<void>;
}
interface WeriftModule {
  RTCPeerConnection: new (config: object) => WeriftPc;
  RTCRtpCodecParameters: new (p: object) => object;
  MediaStreamTrack: new (p: { kind: string }) => WeriftTrack;
}

export function weriftCodecs(w: WeriftModule): object {
  return {
    video: [new w.RTCRtpCodecParameters({
      mimeType: 'video/H264', clockRate: 90000, payloadType: VIDEO_PT,
      rtcpFeedback: [{ type: 'nack' }, { type: 'nack', parameter: 'pli' }],
      parameters: 'profile-level-id=42e01f;packetization-mode=1;level-asymmetry-allowed=1',
    })],
    audio: [new w.RTCRtpCodecParameters({ mimeType: 'audio/opus', clockRate: 48000, channels: 2, payloadType: AUDIO_PT })],
  };
}

export function loadWerift(): WeriftModule {
  return evalRequire()('werift') as WeriftModule;
}

/** werift: one shared track per kind; writeRtp parses a packet once and every sender gets it. */
export function weriftSender(): SendStack {
  const w = loadWerift();
  const vTrack = new w.MediaStreamTrack({ kind: 'video' });
  const aTrack = new w.MediaStreamTrack({ kind: 'audio' });
  return {
    peer(): SendPeer {
      const pc = new w.RTCPeerConnection({
        codecs: weriftCodecs(w), iceAdditionalHostAddresses: ['127.0.0.1'], iceUseIpv6: false,
      });
      pc.addTransceiver(vTrack, { direction: 'sendonly' });
      pc.addTransceiver(aTrack, { direction: 'sendonly' });
      return {
        async offer() {
          await pc.setLocalDescription(await pc.createOffer());
          return pc.localDescription?.sdp ?? '';
        },
        async accept(sdp) { await pc.setRemoteDescription({ type: 'answer', sdp }); },
        close() { void pc.close(); },
      };
    },
    video(p) { vTrack.writeRtp(p); },
    audio(p) { aTrack.writeRtp(p); },
  };
}

// ---- node-datachannel (libdatachannel, native) -----------------------------------------------
interface NdcMedia { addSSRC(ssrc: number, name?: string, msid?: string, trackId?: string): void }
interface NdcVideo extends NdcMedia { addH264Codec(pt: number, profile?: string): void }
interface NdcAudio extends NdcMedia { addOpusCodec(pt: number, profile?: string): string }
export interface NdcTrack {
  sendMessageBinary(b: Buffer): boolean;
  isOpen(): boolean;
  onOpen(cb: () => void): void;
  onMessage(cb: (m: Buffer) => void): void;
  setMediaHandler(h: object): void;
  close(): void;
}
export interface NdcPc {
  addTrack(m: NdcMedia): NdcTrack;
  setLocalDescription(type?: string): void;
  setRemoteDescription(sdp: string, type: string): void;
  localDescription(): { sdp: string; type: string } | null;
  gatheringState(): string;
  onGatheringStateChange(cb: (s: string) => void): void;
  onStateChange(cb: (s: string) => void): void;
  onTrack(cb: (t: NdcTrack) => void): void;
  close(): void;
}
export interface NdcModule {
  PeerConnection: new (name: string, config: object) => NdcPc;
  Video: new (mid: string, dir: string) => NdcVideo;
  Audio: new (mid: string, dir: string) => NdcAudio;
  RtcpNackResponder: new (maxSize?: number) => object;
  cleanup(): void;
}

export function loadNdc(): NdcModule {
  return evalRequire()('node-datachannel') as NdcModule;
}

/** The local description once ICE gathering is complete. */
export function ndcGathered(pc: NdcPc): Promise<string> {
  return waitFor<string>(10_000, 'ndc gathering', (done) => {
    const check = (s: string) => { if (s === 'complete') done(pc.localDescription()?.sdp ?? ''); };
    pc.onGatheringStateChange(check);
    check(pc.gatheringState());
  });
}

/** node-datachannel: one PeerConnection and two tracks per viewer; each packet handed to every open track (SRTP in C++). */
export function ndcSender(): SendStack {
  const n = loadNdc();
  const peers = new Set<{ v: NdcTrack; a: NdcTrack }>();
  return {
    peer(): SendPeer {
      const pc = new n.PeerConnection('server', { iceServers: [], bindAddress: '127.0.0.1' });
      const video = new n.Video('0', 'SendOnly');
      video.addH264Codec(VIDEO_PT);
      video.addSSRC(VIDEO_SSRC, 'video', 'stream', 'video');
      const audio = new n.Audio('1', 'SendOnly');
      audio.addOpusCodec(AUDIO_PT);
      audio.addSSRC(AUDIO_SSRC, 'audio', 'stream', 'audio');
      const entry = { v: pc.addTrack(video), a: pc.addTrack(audio) };
      // retransmits on NACK from its own packet store (C++), as werift's senders do by default
      entry.v.setMediaHandler(new n.RtcpNackResponder());
      entry.a.setMediaHandler(new n.RtcpNackResponder());
      return {
        async offer() { pc.setLocalDescription(); return ndcGathered(pc); },
        async accept(sdp) { pc.setRemoteDescription(sdp, 'answer'); peers.add(entry); },
        close() { peers.delete(entry); pc.close(); },
      };
    },
    video(p) { for (const e of peers) if (e.v.isOpen()) e.v.sendMessageBinary(p); },
    audio(p) { for (const e of peers) if (e.a.isOpen()) e.a.sendMessageBinary(p); },
  };
}
