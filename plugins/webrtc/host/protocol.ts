/*
 * The messages between the service and its WebRTC host process (host/entry.ts), over node's IPC
 * channel. Media never crosses it: a feed's RTP comes to the host's UDP sockets on loopback from
 * the feed's ffmpeg, and a publisher's RTP leaves the host to the ingest ffmpeg's UDP ports.
 */

/** What the host needs (sent over IPC, never on argv). */
export interface HostOptions {
  /** Address the ICE agent binds ('' = every interface). */
  bindAddress: string;
  /** UDP ports of the ICE agent (0 and 0: any port the system gives). */
  portMin: number;
  portMax: number;
  /** STUN/TURN servers, as libdatachannel takes them (`stun:host:port`, `turn:user:pass@host:port`). */
  iceServers: string[];
  /** Addresses added to the answer's host candidates (1:1 NAT). */
  publicAddresses: string[];
  /** A session not connected by then is closed. */
  connectMs: number;
  /** Most sessions at once (viewers and publishers). */
  maxSessions: number;
}

/** The codec chosen for one kind of a publisher's media, for the ingest ffmpeg's SDP. */
export interface ChosenCodec {
  name: 'H264' | 'VP8' | 'OPUS';
  pt: number;
  clock: number;
  channels: number;
  fmtp: string;
}

/** A refusal in HTTP terms (the route answers with it). */
export interface HostRefusal {
  status: 400 | 406 | 503;
  message: string;
}

export type ToHost =
  | { t: 'start'; opts: HostOptions }
  /** Opens the UDP sockets a feed's ffmpeg sends its RTP (and RTCP) to; answered `fed`. */
  | { t: 'feed'; seq: number; name: string; videoSsrc: number; audioSsrc: number }
  | { t: 'unfeed'; name: string }
  /** A viewer (WHEP): answered `answered` or `refused`. */
  | { t: 'play'; seq: number; id: string; feed: string; offer: string }
  /** A publisher (WHIP): answered `answered` (with the chosen codecs) or `refused`. */
  | { t: 'publish'; seq: number; id: string; offer: string }
  /** Where a publisher's RTP goes from now on (the ingest ffmpeg's ports). */
  | { t: 'sink'; id: string; video: number; audio: number }
  | { t: 'close'; id: string };

export type FromHost =
  | { t: 'ready'; version: string }
  | { t: 'failed'; message: string }
  | { t: 'fed'; seq: number; video: number; audio: number }
  | { t: 'answered'; seq: number; sdp: string; video?: ChosenCodec; audio?: ChosenCodec }
  | { t: 'refused'; seq: number; refusal: HostRefusal }
  /** A session connected (media flows) or ended (closed, failed, or never connected). */
  | { t: 'state'; id: string; state: 'connected' | 'closed'; why?: string }
  | { t: 'traffic'; rows: Array<[id: string, rx: number, tx: number]> }
  | { t: 'log'; level: 'debug' | 'info' | 'warn' | 'error'; msg: string; fields?: Record<string, unknown> };
