/*
 * The few facts of an SDP offer the WebRTC host needs (pure functions): each media section's kind,
 * mid, direction and codecs, the payload type to answer with, and the answer's host candidates
 * repeated for the configured public addresses (1:1 NAT, as MediaMTX's `webrtcAdditionalHosts`).
 */

/** One codec of a media section: `a=rtpmap` with its `a=fmtp`. */
export interface SdpCodec {
  pt: number;
  /** Upper case: `H264`, `VP8`, `OPUS`, ... */
  name: string;
  clock: number;
  channels: number;
  fmtp: string;
}

/** One `m=` section of an offer. */
export interface SdpMedia {
  kind: string;
  mid: string;
  /** `sendrecv`, `sendonly`, `recvonly` or `inactive`. */
  direction: string;
  codecs: SdpCodec[];
}

/** Most m-sections and codecs read from one offer: a browser sends 2-3 sections of about 30 codecs. */
const MAX_SECTIONS = 16;
const MAX_CODECS = 128;

/** The media sections of an offer, in order; a section without a mid gets its index (as libdatachannel does). */
export function parseOffer(sdp: string): SdpMedia[] {
  const out: SdpMedia[] = [];
  let cur: SdpMedia | undefined;
  const fmtps = new Map<SdpMedia, Map<number, string>>();
  for (const raw of sdp.split('\n')) {
    const line = raw.trimEnd();
    if (line.startsWith('m=')) {
      if (out.length >= MAX_SECTIONS) break;
      cur = { kind: line.slice(2).split(' ')[0] ?? '', mid: String(out.length), direction: 'sendrecv', codecs: [] };
      out.push(cur);
      fmtps.set(cur, new Map());
      continue;
    }
    if (!cur) continue;
    if (line.startsWith('a=mid:')) cur.mid = line.slice(6).trim();
    else if (/^a=(sendrecv|sendonly|recvonly|inactive)$/.test(line)) cur.direction = line.slice(2);
    else if (line.startsWith('a=rtpmap:') && cur.codecs.length < MAX_CODECS) {
      const m = /^a=rtpmap:(\d{1,3}) ([^/\s]+)\/(\d+)(?:\/(\d+))?/.exec(line);
      // an RTP payload type has 7 bits
      if (m && Number(m[1]) <= 127) cur.codecs.push({ pt: Number(m[1]), name: m[2]!.toUpperCase(), clock: Number(m[3]), channels: Number(m[4] ?? 1), fmtp: '' });
    } else if (line.startsWith('a=fmtp:')) {
      const m = /^a=fmtp:(\d+) (.*)$/.exec(line);
      if (m) fmtps.get(cur)!.set(Number(m[1]), m[2]!);
    }
  }
  for (const media of out) for (const c of media.codecs) c.fmtp = fmtps.get(media)!.get(c.pt) ?? '';
  return out;
}

/** One `key=value` of an fmtp line. */
export function fmtpValue(fmtp: string, key: string): string | undefined {
  for (const part of fmtp.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim().toLowerCase() === key) return part.slice(i + 1).trim();
  }
  return undefined;
}

/**
 * The H.264 payload type to answer with: packetization mode 1 (FU-A: what ffmpeg's RTP muxer and
 * OBS send), constrained baseline `42e01f` first (every browser has it; browsers decode any profile
 * they receive on it), then any other mode-1 H.264.
 */
export function pickH264(codecs: readonly SdpCodec[]): SdpCodec | undefined {
  const mode1 = codecs.filter((c) => c.name === 'H264' && fmtpValue(c.fmtp, 'packetization-mode') === '1');
  const rank = (c: SdpCodec) => {
    const p = (fmtpValue(c.fmtp, 'profile-level-id') ?? '').toLowerCase();
    return p.startsWith('42e0') ? 0 : p.startsWith('4200') ? 1 : 2;
  };
  return mode1.sort((a, b) => rank(a) - rank(b))[0];
}

/** Opus at 48 kHz, stereo (WebRTC's only Opus form). */
export function pickOpus(codecs: readonly SdpCodec[]): SdpCodec | undefined {
  return codecs.find((c) => c.name === 'OPUS' && c.clock === 48000);
}

/** VP8: a browser that cannot send H.264 can always send it (WHIP only; the service transcodes it). */
export function pickVp8(codecs: readonly SdpCodec[]): SdpCodec | undefined {
  return codecs.find((c) => c.name === 'VP8' && c.clock === 90000);
}

/**
 * The answer with each host candidate repeated for every public address (same port, lower
 * priority), so a client behind the internet reaches a service behind a 1:1 NAT without STUN.
 */
export function addPublicCandidates(sdp: string, addresses: readonly string[]): string {
  if (addresses.length === 0) return sdp;
  const eol = sdp.includes('\r\n') ? '\r\n' : '\n';
  const out: string[] = [];
  let n = 0;
  for (const line of sdp.split(eol)) {
    out.push(line);
    // a=candidate:<foundation> <component> <transport> <priority> <address> <port> typ host ...
    const m = /^a=candidate:(\S+) (\d+) (\S+) (\d+) (\S+) (\d+) typ host(.*)$/.exec(line);
    if (!m) continue;
    for (const address of addresses) {
      n += 1;
      const priority = Math.max(1, Number(m[4]) - 256 * n);
      out.push(`a=candidate:pub${n} ${m[2]} ${m[3]} ${priority} ${address} ${m[6]} typ host${m[7]}`);
    }
  }
  return out.join(eol);
}

/** RTCP (RFC 5761 demultiplexing): packet types 192-223 in the second byte. */
export function isRtcp(packet: Buffer): boolean {
  const pt = packet[1] ?? 0;
  return pt >= 192 && pt <= 223;
}

/**
 * Whether an H.264 RTP packet (RFC 6184) starts a decodable picture: an SPS, or an IDR slice
 * whole, aggregated (STAP-A) or at the start of its fragments (FU-A).
 */
export function startsKeyframe(packet: Buffer): boolean {
  if (packet.length < 13) return false;
  const cc = packet[0]! & 0x0f;
  let off = 12 + cc * 4;
  if (packet[0]! & 0x10) {
    // header extension: 4 bytes, then its length in 32-bit words
    if (packet.length < off + 4) return false;
    off += 4 + packet.readUInt16BE(off + 2) * 4;
  }
  const nal = packet[off];
  if (nal === undefined) return false;
  const type = nal & 0x1f;
  if (type === 7 || type === 5) return true;
  if (type === 24) return ((packet[off + 3] ?? 0) & 0x1f) === 7 || ((packet[off + 3] ?? 0) & 0x1f) === 5;
  if (type === 28) {
    const fu = packet[off + 1] ?? 0;
    return (fu & 0x80) !== 0 && (fu & 0x1f) === 5;
  }
  return false;
}
