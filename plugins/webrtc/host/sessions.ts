import { createSocket, type Socket } from 'node:dgram';
import type { Audio, PeerConnection, Track, Video } from 'node-datachannel';
import type { ChosenCodec, FromHost, HostOptions, HostRefusal } from './protocol.ts';
import { fanOut, type Out } from './fan.ts';
import { addPublicCandidates, isRtcp, parseOffer, pickH264, pickOpus, pickVp8, type SdpCodec } from './sdp.ts';

type Ndc = typeof import('node-datachannel');

/** A session's answer, or why there is none. */
export type Answer = { sdp: string; video?: ChosenCodec; audio?: ChosenCodec } | { refusal: HostRefusal };


interface Session {
  id: string;
  pc: PeerConnection;
  feed?: string;
  video?: Out;
  audio?: Out;
  /** A publisher's tracks (keyframe requests) and where their RTP goes. */
  inbound: Track[];
  sink?: { video: number; audio: number };
  connected: boolean;
  timers: NodeJS.Timeout[];
  /** The check after a `disconnected` state (one at a time: a peer flapping adds no more). */
  disconnected?: NodeJS.Timeout;
  /** The keyframe asks of the current sink. */
  keyframes?: NodeJS.Timeout[];
  /** RTP and RTCP bytes received from and sent to the peer (before SRTP). */
  rx: number;
  tx: number;
}

interface Feed { video: Socket; audio: Socket; videoSsrc: number; audioSsrc: number; viewers: Set<Session> }

/** How long gathering may take before the answer goes with the candidates found so far (STUN). */
const GATHER_MS = 3000;
/** A session that lost its connectivity gets this long to come back. */
const DISCONNECTED_MS = 5000;
/** Keyframe requests to a new publisher, after its RTP has a place to go (the ingest ffmpeg). */
const KEYFRAME_AT_MS = [0, 1000];
/**
 * Then one every so often: a browser sends a keyframe only when asked (PLI), so without these a
 * reader that joins later (a WHEP viewer, an RTMP player, HLS) would wait for ever for one to start at.
 */
const KEYFRAME_EVERY_MS = 2000;

const refuse = (status: HostRefusal['status'], message: string): Answer => ({ refusal: { status, message } });
const chosen = (c: SdpCodec): ChosenCodec => ({ name: c.name as ChosenCodec['name'], pt: c.pt, clock: c.clock, channels: c.channels, fmtp: c.fmtp });

/**
 * The WebRTC sessions of the host process (libdatachannel through node-datachannel): viewers get
 * their feed's RTP, passed through with their own payload type (SRTP in C++); publishers' RTP goes
 * to the ingest ffmpeg on loopback. Every session has a deadline to connect and ends on failure.
 */
export class Sessions {
  readonly #ndc: Ndc;
  readonly #o: HostOptions;
  readonly #send: (m: FromHost) => void;
  readonly #feeds = new Map<string, Feed>();
  readonly #sessions = new Map<string, Session>();
  readonly #out: Socket = createSocket('udp4');

  constructor(ndc: Ndc, o: HostOptions, send: (m: FromHost) => void) {
    this.#ndc = ndc;
    this.#o = o;
    this.#send = send;
    this.#out.on('error', () => { /* an ingest ffmpeg that went away */ });
  }

  get size(): number {
    return this.#sessions.size;
  }

  /** Opens a feed's two UDP sockets on loopback (RTP and RTCP of each kind arrive on one port). */
  async feed(name: string, videoSsrc: number, audioSsrc: number): Promise<{ video: number; audio: number }> {
    this.unfeed(name);
    const bind = (onPacket: (p: Buffer) => void) => new Promise<Socket>((resolve, reject) => {
      const s = createSocket('udp4');
      s.once('error', reject);
      s.on('message', onPacket);
      s.bind(0, '127.0.0.1', () => { s.removeListener('error', reject); s.on('error', () => {}); resolve(s); });
    });
    const viewers = new Set<Session>();
    const video = await bind((p) => this.#fan(viewers, 'video', p));
    const audio = await bind((p) => this.#fan(viewers, 'audio', p));
    for (const s of [video, audio]) { try { s.setRecvBufferSize(4 << 20); } catch { /* the system's maximum applies */ } }
    this.#feeds.set(name, { video, audio, videoSsrc, audioSsrc, viewers });
    return { video: video.address().port, audio: audio.address().port };
  }

  unfeed(name: string): void {
    const f = this.#feeds.get(name);
    if (!f) return;
    this.#feeds.delete(name);
    f.video.close();
    f.audio.close();
  }

  /** One packet of a feed to every viewer; a viewer whose track closed under it ends alone. */
  #fan(viewers: Set<Session>, kind: 'video' | 'audio', p: Buffer): void {
    const gone = fanOut(viewers, kind, p);
    if (gone) for (const s of gone) this.close(s.id, 'track closed');
  }

  #peer(id: string): PeerConnection {
    const o = this.#o;
    return new this.#ndc.PeerConnection(id, {
      iceServers: o.iceServers,
      ...(o.bindAddress ? { bindAddress: o.bindAddress } : {}),
      ...(o.portMin > 0 ? { portRangeBegin: o.portMin, portRangeEnd: o.portMax } : {}),
    });
  }

  /** A viewer of `feed` (WHEP): sendonly H.264 and Opus tracks on the offer's mids and payload types. */
  async play(id: string, feedName: string, offer: string): Promise<Answer> {
    const feed = this.#feeds.get(feedName);
    if (!feed) return refuse(503, 'the stream is not ready for WebRTC');
    const media = parseOffer(offer);
    const v = media.find((m) => m.kind === 'video' && m.direction !== 'sendonly' && m.direction !== 'inactive');
    const a = media.find((m) => m.kind === 'audio' && m.direction !== 'sendonly' && m.direction !== 'inactive');
    if (!v && !a) return refuse(400, 'the offer receives no audio or video');
    const vc = v && pickH264(v.codecs);
    const ac = a && pickOpus(a.codecs);
    if (!vc && !ac) return refuse(406, 'the offer has neither H.264 (packetization-mode 1) nor Opus');
    if (this.#sessions.size >= this.#o.maxSessions) return refuse(503, 'too many WebRTC sessions');
    const pc = this.#peer(id);
    const s: Session = { id, pc, feed: feedName, inbound: [], connected: false, timers: [], rx: 0, tx: 0 };
    try {
      if (v && vc) s.video = this.#sendTrack(pc, new this.#ndc.Video(v.mid, 'SendOnly'), vc, feed.videoSsrc, 'video');
      if (a && ac) s.audio = this.#sendTrack(pc, new this.#ndc.Audio(a.mid, 'SendOnly'), ac, feed.audioSsrc, 'audio');
    } catch (err) {
      return this.#unusable(pc, err);
    }
    feed.viewers.add(s);
    return this.#negotiate(s, offer, {});
  }

  /** An offer libdatachannel cannot make tracks of: its peer connection goes, the caller gets 400. */
  #unusable(pc: PeerConnection, err: unknown): Answer {
    try { pc.close(); } catch { /* closed */ }
    return refuse(400, `the offer cannot be used: ${(err as Error).message}`);
  }

  #sendTrack(pc: PeerConnection, m: Video | Audio, c: SdpCodec, ssrc: number, kind: 'video' | 'audio'): Out {
    // no fmtp in the offer (RFC 7587 makes Opus's optional): libdatachannel's default profile, the
    // argument left out (an `undefined` profile is refused by the binding)
    if (kind === 'video') { if (c.fmtp) (m as Video).addH264Codec(c.pt, c.fmtp); else (m as Video).addH264Codec(c.pt); }
    else if (c.fmtp) (m as Audio).addOpusCodec(c.pt, c.fmtp);
    else (m as Audio).addOpusCodec(c.pt);
    m.addSSRC(ssrc, 'core', 'core', kind);
    const track = pc.addTrack(m);
    // retransmits what a viewer lost (NACK) from a packet store in C++
    track.setMediaHandler(new this.#ndc.RtcpNackResponder());
    return { track, pt: c.pt, waitKey: kind === 'video' };
  }

  /** A publisher (WHIP): recvonly tracks, H.264 (else VP8) and Opus; RTP goes to its sink once set. */
  async publish(id: string, offer: string): Promise<Answer> {
    const media = parseOffer(offer);
    const v = media.find((m) => m.kind === 'video' && (m.direction === 'sendonly' || m.direction === 'sendrecv'));
    const a = media.find((m) => m.kind === 'audio' && (m.direction === 'sendonly' || m.direction === 'sendrecv'));
    const vc = v && (pickH264(v.codecs) ?? pickVp8(v.codecs));
    const ac = a && pickOpus(a.codecs);
    if (!vc) return refuse(406, 'the offer sends no H.264 (packetization-mode 1) or VP8 video');
    if (this.#sessions.size >= this.#o.maxSessions) return refuse(503, 'too many WebRTC sessions');
    const pc = this.#peer(id);
    const s: Session = { id, pc, inbound: [], connected: false, timers: [], rx: 0, tx: 0 };
    try {
      const video = new this.#ndc.Video(v!.mid, 'RecvOnly');
      if (vc.name === 'H264' && vc.fmtp) video.addH264Codec(vc.pt, vc.fmtp);
      else if (vc.name === 'H264') video.addH264Codec(vc.pt);
      else video.addVP8Codec(vc.pt);
      this.#recvTrack(s, pc.addTrack(video), 'video');
      if (a && ac) {
        const audio = new this.#ndc.Audio(a.mid, 'RecvOnly');
        if (ac.fmtp) audio.addOpusCodec(ac.pt, ac.fmtp);
        else audio.addOpusCodec(ac.pt);
        this.#recvTrack(s, pc.addTrack(audio), 'audio');
      }
    } catch (err) {
      return this.#unusable(pc, err);
    }
    return this.#negotiate(s, offer, { video: chosen(vc), ...(ac ? { audio: chosen(ac) } : {}) });
  }

  #recvTrack(s: Session, track: Track, kind: 'video' | 'audio'): void {
    // answers sender reports and sends the keyframe requests (PLI)
    track.setMediaHandler(new this.#ndc.RtcpReceivingSession());
    s.inbound.push(track);
    track.onMessage((p) => {
      s.rx += p.length;
      const port = s.sink?.[kind];
      if (!port || p.length < 12) return;
      this.#out.send(p, isRtcp(p) ? port + 1 : port, '127.0.0.1');
    });
  }

  /** The remote offer, then the answer once gathering completes (or after GATHER_MS, with what was found). */
  async #negotiate(s: Session, offer: string, codecs: { video?: ChosenCodec; audio?: ChosenCodec }): Promise<Answer> {
    this.#sessions.set(s.id, s);
    const { pc } = s;
    pc.onStateChange((state) => this.#state(s, state));
    s.timers.push(setTimeout(() => { if (!s.connected) this.close(s.id, 'not connected in time'); }, this.#o.connectMs));
    try {
      pc.setRemoteDescription(offer, 'offer');
    } catch (err) {
      this.close(s.id, 'bad offer');
      return refuse(400, `the offer was refused: ${(err as Error).message}`);
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, GATHER_MS);
      const check = (g: string) => { if (g === 'complete') { clearTimeout(timer); resolve(); } };
      pc.onGatheringStateChange(check);
      check(pc.gatheringState());
    });
    const local = pc.localDescription();
    if (!local || !this.#sessions.has(s.id)) { this.close(s.id, 'no answer'); return refuse(503, 'no answer could be made'); }
    return { sdp: addPublicCandidates(local.sdp, this.#o.publicAddresses), ...codecs };
  }

  #state(s: Session, state: string): void {
    if (state === 'connected') {
      if (s.connected) return;
      s.connected = true;
      this.#send({ t: 'state', id: s.id, state: 'connected' });
    } else if (state === 'failed' || state === 'closed') {
      this.close(s.id, state);
    } else if (state === 'disconnected') {
      clearTimeout(s.disconnected);
      s.disconnected = setTimeout(() => { if (s.pc.state() !== 'connected') this.close(s.id, 'disconnected'); }, DISCONNECTED_MS);
    }
  }

  /** Where a publisher's RTP goes (the ingest ffmpeg listens there now): asks it for keyframes. */
  sink(id: string, video: number, audio: number): void {
    const s = this.#sessions.get(id);
    if (!s) return;
    s.sink = { video, audio };
    const ask = () => {
      for (const t of s.inbound) {
        try { if (t.isOpen()) t.requestKeyframe(); } catch { /* closed under us: its session ends by its state */ }
      }
    };
    // a new sink (the ingest ffmpeg started again) asks anew; the last sink's asks stop
    for (const t of s.keyframes ?? []) clearTimeout(t);
    s.keyframes = [...KEYFRAME_AT_MS.map((ms) => setTimeout(ask, ms)), setInterval(ask, KEYFRAME_EVERY_MS)];
  }

  close(id: string, why: string): void {
    const s = this.#sessions.get(id);
    if (!s) return;
    this.#sessions.delete(id);
    for (const t of s.timers) clearTimeout(t);
    clearTimeout(s.disconnected);
    for (const t of s.keyframes ?? []) clearTimeout(t);
    if (s.feed) this.#feeds.get(s.feed)?.viewers.delete(s);
    try { s.pc.close(); } catch { /* closed already */ }
    this.#send({ t: 'state', id, state: 'closed', why });
  }

  /** Bytes received and sent by every session (for the service's sessions). */
  traffic(): Array<[string, number, number]> {
    return [...this.#sessions.values()].map((s) => [s.id, s.rx, s.tx]);
  }

  closeAll(): void {
    for (const id of [...this.#sessions.keys()]) this.close(id, 'service stops');
    for (const name of [...this.#feeds.keys()]) this.unfeed(name);
    this.#out.close();
  }
}
