import { performance } from 'node:perf_hooks';
import { AUDIO_PT, loadNdc, ndcGathered, type NdcPc, type NdcTrack } from './stacks.ts';

/**
 * Viewer process of the stack comparison: hosts many receiving peers (node-datachannel, native, so
 * the receivers stay cheap on a 2-core box whatever the server's stack), answers the server's offers
 * (non-trickle), and counts the RTP packets and bytes each peer receives (RTCP left out).
 * Messages: {offer,id,sdp} -> {answer,id,sdp}, then {connected,id,t} and {first,id,t} (epoch ms);
 * {stats} -> {stats, peers: [{id, videoPackets, videoBytes, audioPackets}]}; {close,id}; {exit}.
 */
interface Count { videoPackets: number; videoBytes: number; audioPackets: number }
type Msg = { offer?: number; sdp?: string; stats?: true; close?: number; exit?: true };

const n = loadNdc();
const peers = new Map<number, { pc: NdcPc; count: Count; tracks: NdcTrack[] }>();
const now = (): number => performance.timeOrigin + performance.now();
const send = (m: object): void => { process.send?.(m); };

function onPacket(id: number, count: Count, b: Buffer): void {
  if (b.length < 12 || (b[1] >= 200 && b[1] <= 207)) return; // RTCP
  if ((b[1] & 0x7f) !== AUDIO_PT) { // video: H.264, or wrtc's VP8 wrapped in RED, its RTX and FEC
    if (count.videoPackets === 0) send({ first: id, t: now() });
    count.videoPackets++;
    count.videoBytes += b.length;
  } else count.audioPackets++;
}

async function answer(id: number, sdp: string): Promise<void> {
  const pc = new n.PeerConnection(`viewer${id}`, { iceServers: [], bindAddress: '127.0.0.1' });
  const count: Count = { videoPackets: 0, videoBytes: 0, audioPackets: 0 };
  const tracks: NdcTrack[] = []; // held: a track nobody references is collected and goes quiet
  peers.set(id, { pc, count, tracks });
  let connected = false;
  pc.onStateChange((s) => {
    if (s === 'connected' && !connected) { connected = true; send({ connected: id, t: now() }); }
    if (s === 'failed' || s === 'disconnected') send({ error: id, message: `viewer state ${s}` });
  });
  pc.onTrack((t) => { tracks.push(t); t.onMessage((b) => onPacket(id, count, b)); });
  pc.setRemoteDescription(sdp, 'offer');
  send({ answer: id, sdp: await ndcGathered(pc) });
}

process.on('disconnect', () => process.exit(0)); // the parent is gone: no orphan
process.on('message', (m: Msg) => {
  if (m.offer !== undefined && m.sdp) {
    answer(m.offer, m.sdp).catch((e: Error) => send({ error: m.offer, message: e.message }));
  } else if (m.stats) {
    send({ stats: true, peers: [...peers].map(([id, p]) => ({ id, tracks: p.tracks.length, ...p.count })) });
  } else if (m.close !== undefined) {
    peers.get(m.close)?.pc.close();
    peers.delete(m.close);
  } else if (m.exit) {
    for (const p of peers.values()) p.pc.close();
    peers.clear();
    n.cleanup();
    process.exit(0);
  }
});
send({ ready: true });
