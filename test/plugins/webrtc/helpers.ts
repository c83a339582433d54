import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { startApp, type TestApp, type TestLike } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
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

/** A WHEP viewer made of node-datachannel (no browser): the RTP packets it got per kind, updated as they come. */
export interface NdcViewer {
  status: number; session?: string; answer?: string; video: number; audio: number; keyframeFirst?: boolean;
  /** Ends the viewer's process (no word to the service). */
  close(): void;
  /** Closes its peer connection as a client that leaves does (DTLS close). */
  leave(): void;
}

/**
 * Plays `stream` over WHEP with a node-datachannel peer that makes the offer (recvonly H.264 and
 * Opus), in a process of its own (`ndc-viewer.ts`, killed at teardown or by `close`).
 */
export async function ndcViewer(t: TestLike, base: string, stream: string, token = TOKEN): Promise<NdcViewer> {
  const child = fork(fileURLToPath(new URL('./ndc-viewer.ts', import.meta.url)), [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const out: NdcViewer = { status: 0, video: 0, audio: 0, close: () => { child.kill('SIGKILL'); }, leave: () => { if (child.connected) child.send({ t: 'close' }); } };
  t.teardown(() => out.close());
  child.on('message', (m: { t: string; video: number; audio: number; keyframeFirst?: boolean }) => {
    if (m.t !== 'counts') return;
    out.video = m.video;
    out.audio = m.audio;
    if (m.keyframeFirst !== undefined) out.keyframeFirst = m.keyframeFirst;
  });
  const played = await new Promise<{ status: number; session?: string; answer?: string; error?: string }>((resolve, reject) => {
    child.on('message', (m: { t: string }) => { if (m.t === 'played') resolve(m as never); });
    child.once('exit', (code, signal) => reject(new Error(`the viewer process ended (${signal ?? code})`)));
    child.send({ t: 'play', base, stream, token });
  });
  if (played.error) throw new Error(played.error);
  out.status = played.status;
  if (played.session) out.session = played.session;
  if (played.answer) out.answer = played.answer;
  return out;
}

/**
 * Waits for `video` (and `audio`) packets at each viewer; one whose connection carried none in 30 s (ICE or DTLS
 * lost on a box busy with the other suites) is made again once, as a player reconnects, and what it
 * got is printed (its session is deleted). Returns the viewers that carry media; throws when a second try carries none.
 */
export async function withMedia(t: TestLike & { comment(...m: unknown[]): void }, base: string, stream: string, viewers: NdcViewer[], video: number, token = TOKEN, audio = 0): Promise<NdcViewer[]> {
  const got = (v: NdcViewer) => v.video >= video && v.audio >= audio;
  if (await waitFor(() => viewers.every(got), { timeout: 30_000 }).then(() => true, () => false)) return viewers;
  const dry = viewers.filter((v) => !got(v));
  t.comment(`${dry.length} of ${viewers.length} WHEP viewers of ${stream} got no media in 30 s (${dry.map((v) => `${v.status}: ${v.video} video, ${v.audio} audio`).join('; ')}): made again`);
  for (const v of dry) {
    v.close();
    // its session ends now, not when ICE consent fails (a test may count the sessions)
    if (v.session) await fetch(new URL(v.session, base), { method: 'DELETE', headers: { authorization: `Bearer ${token}` } }).then((r) => r.body?.cancel(), () => undefined);
  }
  const again = await Promise.all(dry.map(() => ndcViewer(t, base, stream, token)));
  const refused = again.find((v) => v.status !== 201);
  if (refused) throw new Error(`a WHEP viewer of ${stream} made again: ${refused.status}, not 201`);
  const out = [...viewers.filter(got), ...again];
  await waitFor(() => out.every(got), { timeout: 30_000, what: `media at every WHEP viewer of ${stream}` });
  return out;
}

/** A WHEP viewer of `stream` that got `video` packets (made again once when it got none: `withMedia`). */
export async function playingViewer(t: TestLike & { comment(...m: unknown[]): void }, base: string, stream: string, video: number, token = TOKEN): Promise<NdcViewer> {
  const first = await ndcViewer(t, base, stream, token);
  if (first.status !== 201) throw new Error(`WHEP of ${stream}: ${first.status}, not 201`);
  return (await withMedia(t, base, stream, [first], video, token))[0]!;
}
