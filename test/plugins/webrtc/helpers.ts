import type { Page } from 'playwright-core';
import { startApp, type TestApp, type TestLike } from '../../helpers/app.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';

export const TOKEN = 'web-rtc-token';

/** The service with RTMP and WebRTC (loopback host candidates only, as the issue asks for tests). */
export async function startWebrtcApp(t: TestLike, webrtc: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): Promise<TestApp & { rtmpBase: string }> {
  const app = await startApp(t, { config: { ...extra, rtmp: { enable: true, address: '127.0.0.1:0' }, webrtc: { enable: true, bind_address: '127.0.0.1', token: TOKEN, ...webrtc } } });
  const rtmp = app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService;
  return Object.assign(app, { rtmpBase: `rtmp://127.0.0.1:${rtmp.ports().rtmp}` });
}

/** A test source: H.264 (1 s GOP) and AAC, paced, for `-f flv` or `-f mpegts`. */
export const SOURCE = ['-re', '-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000',
  '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '25', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '64k'];

/** Decoded video frames and received audio packets of the page's peer connection (`window.whep`, or `pc`). */
export async function received(page: Page): Promise<{ frames: number; audio: number; state: string }> {
  return page.evaluate(async () => {
    const w = window as unknown as { whep?: { pc?: RTCPeerConnection }; pc?: RTCPeerConnection };
    const pc = w.whep?.pc ?? w.pc;
    if (!pc) return { frames: 0, audio: 0, state: 'none' };
    const out = { frames: 0, audio: 0, state: pc.connectionState as string };
    (await pc.getStats()).forEach((r: { type: string; kind?: string; framesDecoded?: number; packetsReceived?: number }) => {
      if (r.type !== 'inbound-rtp') return;
      if (r.kind === 'video') out.frames = r.framesDecoded ?? 0;
      if (r.kind === 'audio') out.audio = r.packetsReceived ?? 0;
    });
    return out;
  });
}

/** A WHEP viewer made of node-datachannel (no browser): counts the RTP packets it gets per kind. */
export interface NdcViewer { status: number; session?: string; answer?: string; video: number; audio: number; keyframeFirst?: boolean; close(): void }

/**
 * Plays `stream` over WHEP with a node-datachannel peer that makes the offer (recvonly H.264 and
 * Opus). libdatachannel as the OFFERER sometimes throws "Got a remote candidate without ICE
 * transport" on the answer (its own race, seen in bench/webrtc too): that viewer is made again.
 */
export async function ndcViewer(t: TestLike, base: string, stream: string, token = TOKEN): Promise<NdcViewer> {
  for (let i = 0; ; i++) {
    try {
      return await oneViewer(t, base, stream, token);
    } catch (err) {
      if (i >= 2 || !/without ICE transport/.test((err as Error).message)) throw err;
    }
  }
}

async function oneViewer(t: TestLike, base: string, stream: string, token: string): Promise<NdcViewer> {
  const ndc = await import('node-datachannel');
  const pc = new ndc.PeerConnection('test-viewer', { iceServers: [], bindAddress: '127.0.0.1' });
  const v = new ndc.Video('0', 'RecvOnly');
  v.addH264Codec(102);
  const a = new ndc.Audio('1', 'RecvOnly');
  a.addOpusCodec(111);
  const out: NdcViewer = { status: 0, video: 0, audio: 0, close: () => { try { pc.close(); } catch { /* closed */ } } };
  const tracks = [pc.addTrack(v), pc.addTrack(a)];
  tracks[0]!.onMessage((b) => {
    if (b.length < 12 || (b[1]! >= 200 && b[1]! <= 207)) return;
    if (out.video === 0) out.keyframeFirst = [5, 7, 24, 28].includes(b[12 + (b[0]! & 0x0f) * 4]! & 0x1f);
    out.video++;
  });
  tracks[1]!.onMessage((b) => { if (b.length >= 12 && !(b[1]! >= 200 && b[1]! <= 207)) out.audio++; });
  t.teardown(() => out.close());
  pc.setLocalDescription();
  await new Promise<void>((resolve) => {
    const done = setTimeout(resolve, 3000);
    pc.onGatheringStateChange((s) => { if (s === 'complete') { clearTimeout(done); resolve(); } });
    if (pc.gatheringState() === 'complete') { clearTimeout(done); resolve(); }
  });
  const res = await fetch(`${base}/webrtc/${stream}/whep`, { method: 'POST', headers: { 'content-type': 'application/sdp', authorization: `Bearer ${token}` }, body: pc.localDescription()!.sdp });
  out.status = res.status;
  const text = await res.text();
  if (res.status !== 201) return out;
  out.session = res.headers.get('location') ?? undefined;
  out.answer = text;
  try {
    pc.setRemoteDescription(text, 'answer');
  } catch (err) {
    out.close();
    // the session the service made for it ends with its connect deadline, or now
    if (out.session) await fetch(base + out.session, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    throw err;
  }
  (out as NdcViewer & { tracks: unknown }).tracks = tracks; // held: a track nobody references goes quiet
  return out;
}
