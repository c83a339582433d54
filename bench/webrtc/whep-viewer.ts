import ndc from 'node-datachannel';
import type { PeerConnection, Track } from 'node-datachannel';

/**
 * Viewer process of the WHEP bench (`whep.ts`): many WHEP viewers (node-datachannel peers) in one
 * process. Each makes the offer, as WHEP has it: recvonly H.264 (PT 96) and Opus (PT 111), ICE
 * gathering complete (non-trickle, 127.0.0.1 only), POSTed to the service with the Bearer token;
 * the 201's SDP is the answer, its Location the session (DELETEd at close). Each peer counts the
 * RTP packets and bytes it gets per kind and the sequence numbers missing (RTCP left out).
 * Messages: `{connect, url, token}` -> `{up, offerMs, answerMs, connectedMs, firstRtpMs}` (ms from
 * the start) or `{failed, message}`; `{stats}` -> `{stats, peers}`; `{close}` -> `{closed, status}`
 * (the DELETE's); `{exit}`. A parent that goes away ends it.
 */
const VIDEO_PT = 96;
const AUDIO_PT = 111;
/** A viewer with no video RTP this long after its start failed. */
const UP_MS = 20_000;

interface Count { packets: number; bytes: number; first: number; max: number; last: number; cycles: number }
interface Peer { pc: PeerConnection; tracks: Track[]; video: Count; audio: Count; location?: string; token: string; origin: string }
type Msg = { connect?: number; url?: string; token?: string; stats?: true; close?: number; exit?: true };

const peers = new Map<number, Peer>();
const send = (m: object): void => { process.send?.(m); };
const count = (): Count => ({ packets: 0, bytes: 0, first: -1, max: -1, last: -1, cycles: 0 });

/** One RTP packet: counted, its extended sequence number followed (wraps at 65536). */
function onPacket(c: Count, b: Buffer): void {
  if (b.length < 12 || (b[1]! >= 200 && b[1]! <= 207)) return; // RTCP
  const seq = b.readUInt16BE(2);
  if (c.last >= 0 && seq < c.last && c.last - seq > 0x8000) c.cycles++;
  c.last = seq;
  const ext = c.cycles * 0x10000 + seq;
  if (c.first < 0) c.first = ext;
  c.max = Math.max(c.max, ext);
  c.packets++;
  c.bytes += b.length;
}

/** Packets missing from the sequence so far (negative when some came twice). */
const lost = (c: Count): number => (c.first < 0 ? 0 : c.max - c.first + 1 - c.packets);

function gathered(pc: PeerConnection): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('ICE gathering did not complete')), 10_000);
    const check = (s: string) => { if (s === 'complete') { clearTimeout(timer); resolve(pc.localDescription()?.sdp ?? ''); } };
    pc.onGatheringStateChange(check);
    check(pc.gatheringState());
  });
}

/** Resolves at the first video RTP packet (after `connected`), with the times from `t0`. */
function firstMedia(p: Peer, t0: number): { connected: Promise<number>; first: Promise<number> } {
  const now = () => performance.now() - t0;
  const connected = new Promise<number>((resolve, reject) => {
    p.pc.onStateChange((s) => {
      if (s === 'connected') resolve(now());
      if (s === 'failed' || s === 'closed') reject(new Error(`peer ${s}`));
    });
  });
  const first = new Promise<number>((resolve) => {
    const [video, audio] = p.tracks;
    video!.onMessage((b) => { onPacket(p.video, b); if (p.video.packets === 1) resolve(now()); });
    audio!.onMessage((b) => onPacket(p.audio, b));
  });
  return { connected, first };
}

async function connect(id: number, url: string, token: string): Promise<void> {
  const t0 = performance.now();
  const pc = new ndc.PeerConnection(`whep${id}`, { iceServers: [], bindAddress: '127.0.0.1' });
  const video = new ndc.Video('0', 'RecvOnly');
  video.addH264Codec(VIDEO_PT);
  const audio = new ndc.Audio('1', 'RecvOnly');
  audio.addOpusCodec(AUDIO_PT);
  // the tracks are held: a track nobody references is collected and goes quiet
  const p: Peer = { pc, tracks: [pc.addTrack(video), pc.addTrack(audio)], video: count(), audio: count(), token, origin: new URL(url).origin };
  peers.set(id, p);
  const media = firstMedia(p, t0);
  media.connected.catch(() => undefined); // awaited below
  pc.setLocalDescription();
  const offer = await gathered(pc);
  const offerMs = performance.now() - t0;
  const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/sdp', Authorization: `Bearer ${token}` }, body: offer });
  const sdp = await res.text();
  if (res.status !== 201) throw new Error(`POST ${res.status}: ${sdp.slice(0, 200)}`);
  p.location = res.headers.get('location') ?? undefined;
  pc.setRemoteDescription(sdp, 'answer');
  const answerMs = performance.now() - t0;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no video RTP in ${UP_MS / 1000} s (peer ${pc.state()}, ${p.audio.packets} audio packets)`)), UP_MS);
  });
  try {
    const [connectedMs, firstRtpMs] = await Promise.race([Promise.all([media.connected, media.first]), deadline]);
    send({ up: id, offerMs, answerMs, connectedMs, firstRtpMs });
  } finally {
    clearTimeout(timer);
  }
}

/** Ends a viewer: DELETE of its session (the status, 0 without one), then its peer. */
async function close(id: number): Promise<number> {
  const p = peers.get(id);
  if (!p) return 0;
  peers.delete(id);
  let status = 0;
  if (p.location) {
    status = await fetch(p.origin + p.location, { method: 'DELETE', headers: { Authorization: `Bearer ${p.token}` } })
      .then((r) => r.status, () => -1);
  }
  try { p.pc.close(); } catch { /* closed already */ }
  return status;
}

function stats(): object[] {
  return [...peers].map(([id, p]) => ({
    id, state: p.pc.state(), videoPackets: p.video.packets, videoBytes: p.video.bytes, videoLost: lost(p.video),
    audioPackets: p.audio.packets, audioBytes: p.audio.bytes, audioLost: lost(p.audio),
  }));
}

function exit(): void {
  for (const p of peers.values()) { try { p.pc.close(); } catch { /* closed */ } }
  peers.clear();
  ndc.cleanup();
  process.exit(0);
}

process.on('disconnect', exit); // the parent is gone: no orphan
process.on('message', (m: Msg) => {
  if (m.connect !== undefined && m.url && m.token) {
    const id = m.connect;
    connect(id, m.url, m.token).catch(async (e: Error) => {
      await close(id);
      send({ failed: id, message: e.message });
    });
  } else if (m.stats) send({ stats: true, peers: stats() });
  else if (m.close !== undefined) { const id = m.close; void close(id).then((status) => send({ closed: id, status })); }
  else if (m.exit) exit();
});
send({ ready: true });
