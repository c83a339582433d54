import type { ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { TsCutter, type ChildrenService, type StreamPublisher } from '../../sdk/index.ts';
import type { ChosenCodec } from './host/protocol.ts';

/** The SDP the ingest ffmpeg reads: the publisher's RTP as the host forwards it to loopback. */
export function ingestSdp(video: ChosenCodec, vport: number, audio: ChosenCodec | undefined, aport: number): string {
  const lines = ['v=0', 'o=- 0 0 IN IP4 127.0.0.1', 's=whip', 'c=IN IP4 127.0.0.1', 't=0 0',
    `m=video ${vport} RTP/AVP ${video.pt}`, `a=rtpmap:${video.pt} ${video.name}/${video.clock}`];
  if (video.fmtp) lines.push(`a=fmtp:${video.pt} ${video.fmtp}`);
  if (audio) lines.push(`m=audio ${aport} RTP/AVP ${audio.pt}`, `a=rtpmap:${audio.pt} opus/48000/2`);
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * The ingest ffmpeg: H.264 passes through (VP8, from a browser without H.264, is encoded to
 * H.264), Opus becomes AAC, out as MPEG-TS for the stream table (which RTMP, SRT and HLS read).
 */
export function ingestArgs(video: ChosenCodec, audio: boolean): string[] {
  const v = video.name === 'H264'
    ? ['-c:v', 'copy']
    : ['-c:v', 'libx264', '-preset', 'veryfast', '-tune', 'zerolatency', '-g', '50', '-pix_fmt', 'yuv420p'];
  return [
    '-hide_banner', '-loglevel', 'error', '-nostats', '-protocol_whitelist', 'pipe,udp,rtp', '-fflags', '+genpts',
    '-reorder_queue_size', '64', '-f', 'sdp', '-i', 'pipe:0',
    '-map', '0:v:0', ...v, ...(audio ? ['-map', '0:a:0', '-c:a', 'aac', '-b:a', '128k', '-ar', '48000'] : []),
    '-f', 'mpegts', '-muxdelay', '0', '-flush_packets', '1', 'pipe:1',
  ];
}

/** A free even UDP port whose next port is free too (RTP and RTCP of one kind), on loopback. */
export async function freeRtpPort(): Promise<number> {
  const bind = (port: number) => new Promise<ReturnType<typeof createSocket> | undefined>((resolve) => {
    const s = createSocket('udp4');
    s.once('error', () => { s.close(); resolve(undefined); });
    s.bind(port, '127.0.0.1', () => resolve(s));
  });
  for (let i = 0; i < 20; i++) {
    const a = await bind(0);
    if (!a) continue;
    const port = a.address().port;
    const b = port % 2 === 0 && port < 65535 ? await bind(port + 1) : undefined;
    a.close();
    b?.close();
    if (b) return port;
  }
  throw new Error('no free UDP port pair on loopback');
}

/** One WHIP publisher's ingest ffmpeg, publishing into the stream table. */
export interface Ingest {
  child: ChildProcess;
  video: number;
  audio: number;
}

/** Starts the ingest ffmpeg for a publisher; its TS goes to `publisher` in whole packets. */
export async function startIngest(children: ChildrenService, ffmpeg: string, video: ChosenCodec, audio: ChosenCodec | undefined,
  publisher: StreamPublisher<'mpegts'>): Promise<Ingest> {
  const vport = await freeRtpPort();
  const aport = audio ? await freeRtpPort() : 0;
  const child = children.spawn(ffmpeg, ingestArgs(video, audio !== undefined), { stdio: ['pipe', 'pipe', 'ignore'] });
  child.on('error', () => { /* exit follows */ });
  child.stdin?.on('error', () => {});
  child.stdin?.end(ingestSdp(video, vport, audio, aport));
  const cutter = new TsCutter();
  child.stdout?.on('data', (chunk: Buffer) => {
    let whole;
    try {
      whole = cutter.cut(chunk);
    } catch {
      child.kill('SIGKILL'); // not MPEG-TS: the session ends with its ingest
      return;
    }
    if (whole) publisher.push(whole);
  });
  return { child, video: vport, audio: aport };
}
