import { evalRequire, waitFor, type SendPeer, type SendStack } from './stacks.ts';

/**
 * @roamhq/wrtc (libwebrtc, native): it has no way to send encoded media. Its only sources are
 * RTCVideoSource (raw I420 frames) and RTCAudioSource (PCM); every PeerConnection runs its own
 * encoder, and its codecs are VP8, VP9 and AV1 (no H.264 in the build at all). So this measures what
 * it can do: 1280x720 25 fps frames (a moving bar over a fixed pattern, cheap to encode) and 48 kHz
 * PCM, encoded per viewer to VP8 and Opus. Bit rate is what libwebrtc picks: the viewers send no
 * bandwidth feedback, so it stays near its start rate.
 */
interface WrtcTrack { stop(): void }
interface WrtcPc {
  addTransceiver(track: WrtcTrack, init: { direction: string }): void;
  createOffer(): Promise<{ type: string; sdp: string }>;
  setLocalDescription(d: { type: string; sdp: string }): Promise<void>;
  setRemoteDescription(d: { type: string; sdp: string }): Promise<void>;
  readonly localDescription: { sdp: string } | null;
  readonly iceGatheringState: string;
  onicegatheringstatechange: (() => void) | null;
  close(): void;
}
interface WrtcModule {
  RTCPeerConnection: new (config: object) => WrtcPc;
  nonstandard: {
    RTCVideoSource: new () => { createTrack(): WrtcTrack; onFrame(f: { width: number; height: number; data: Uint8Array }): void };
    RTCAudioSource: new () => {
      createTrack(): WrtcTrack;
      onData(d: { samples: Int16Array; sampleRate: number; bitsPerSample: number; channelCount: number; numberOfFrames: number }): void;
    };
  };
}

const WIDTH = 1280;
const HEIGHT = 720;

export function wrtcSender(): SendStack {
  const w = evalRequire()('@roamhq/wrtc') as WrtcModule;
  const video = new w.nonstandard.RTCVideoSource();
  const audio = new w.nonstandard.RTCAudioSource();
  const frame = new Uint8Array((WIDTH * HEIGHT * 3) / 2);
  for (let i = 0; i < WIDTH * HEIGHT; i++) frame[i] = (i * 7) & 0xff;
  frame.fill(128, WIDTH * HEIGHT);
  let n = 0;
  const frames = setInterval(() => {
    const row = (n++ * 8) % HEIGHT;
    frame.fill(n & 0xff, row * WIDTH, Math.min(HEIGHT, row + 8) * WIDTH);
    video.onFrame({ width: WIDTH, height: HEIGHT, data: frame });
  }, 40);
  const samples = new Int16Array(480);
  let phase = 0;
  const pcm = setInterval(() => {
    for (let i = 0; i < 480; i++) samples[i] = Math.round(8000 * Math.sin((phase++ * 2 * Math.PI * 440) / 48000));
    audio.onData({ samples, sampleRate: 48000, bitsPerSample: 16, channelCount: 1, numberOfFrames: 480 });
  }, 10);
  frames.unref();
  pcm.unref();
  return {
    peer(): SendPeer {
      const pc = new w.RTCPeerConnection({ iceServers: [] });
      const tracks = [video.createTrack(), audio.createTrack()];
      for (const t of tracks) pc.addTransceiver(t, { direction: 'sendonly' });
      return {
        async offer() {
          await pc.setLocalDescription(await pc.createOffer());
          await waitFor<void>(10_000, 'wrtc gathering', (done) => {
            pc.onicegatheringstatechange = () => { if (pc.iceGatheringState === 'complete') done(); };
            if (pc.iceGatheringState === 'complete') done();
          });
          return pc.localDescription?.sdp ?? '';
        },
        async accept(sdp) { await pc.setRemoteDescription({ type: 'answer', sdp }); },
        close() { pc.close(); for (const t of tracks) t.stop(); },
      };
    },
    video() { /* encoded packets cannot be sent */ },
    audio() { /* encoded packets cannot be sent */ },
  };
}
