import { createSocket } from 'node:dgram';
import { ndcSender, weriftSender, type SendPeer, type SendStack, type StackName } from './stacks.ts';

/**
 * Server process of the stack comparison: one stack (argv[2]) sends the RTP that ffmpeg writes to
 * its two loopback UDP ports (H.264 and Opus, passed through as they are) to every viewer peer.
 * Messages: {create,id} -> {offer,id,sdp}; {answer,id,sdp} -> {accepted,id}; {close,id};
 * {stats} -> {stats, video, audio, videoGaps} (packets in, sequence gaps); {exit}. Sends {ready, videoPort, audioPort} first.
 */
type Msg = { create?: number; answer?: number; sdp?: string; close?: number; stats?: true; exit?: true };

const name = process.argv[2] as StackName;

async function load(): Promise<SendStack> {
  if (name === 'werift') return weriftSender();
  if (name === 'ndc') return ndcSender();
  const { wrtcSender } = await import('./stacks-wrtc.ts');
  return wrtcSender();
}

const stack = await load();
const peers = new Map<number, SendPeer>();
const packetsIn = { video: 0, audio: 0, videoGaps: 0 };
let lastSeq = -1;
const send = (m: object): void => { process.send?.(m); };

/** Loopback UDP in, with a 4 MiB receive buffer (the kernel's rmem_max here) as a plugin would set. */
function bind(onPacket: (b: Buffer) => void): Promise<number> {
  const sock = createSocket({ type: 'udp4', recvBufferSize: 4 << 20 });
  sock.on('message', onPacket);
  return new Promise((resolve) => sock.bind(0, '127.0.0.1', () => resolve(sock.address().port)));
}

const videoPort = await bind((b) => {
  const seq = b.readUInt16BE(2);
  if (lastSeq >= 0 && seq !== ((lastSeq + 1) & 0xffff)) packetsIn.videoGaps++; // lost before the stack saw it
  lastSeq = seq;
  packetsIn.video++;
  stack.video(b);
});
const audioPort = await bind((b) => { packetsIn.audio++; stack.audio(b); });

async function handle(m: Msg): Promise<void> {
  if (m.create !== undefined) {
    const peer = stack.peer();
    peers.set(m.create, peer);
    send({ offer: m.create, sdp: await peer.offer() });
  } else if (m.answer !== undefined && m.sdp) {
    await peers.get(m.answer)?.accept(m.sdp);
    send({ accepted: m.answer });
  } else if (m.close !== undefined) {
    peers.get(m.close)?.close();
    peers.delete(m.close);
  } else if (m.stats) {
    send({ stats: true, ...packetsIn });
  } else if (m.exit) {
    for (const p of peers.values()) p.close();
    process.exit(0);
  }
}

process.on('disconnect', () => process.exit(0)); // the parent is gone: no orphan
process.on('message', (m: Msg) => {
  handle(m).catch((e: Error) => send({ error: m.create ?? m.answer ?? -1, message: e.message }));
});
send({ ready: true, videoPort, audioPort });
