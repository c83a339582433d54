import t from 'tap';
import { readFileSync } from 'node:fs';
import {
  addPublicCandidates, fmtpValue, isRtcp, parseOffer, pickH264, pickOpus, pickVp8, startsKeyframe,
} from '../../../plugins/webrtc/host/sdp.ts';

/* The offer facts the WebRTC host reads, on offers recorded from Chromium 156 (candidates' addresses replaced). */
const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const WHEP = fixture('chromium-156-whep-offer.sdp');
const WHIP = fixture('chromium-156-whip-offer.sdp');

t.test('a WHEP offer: two recvonly sections, the H.264 to answer with is mode 1 constrained baseline', async (t) => {
  const media = parseOffer(WHEP);
  t.same(media.map((m) => [m.kind, m.mid, m.direction]), [['video', '0', 'recvonly'], ['audio', '1', 'recvonly']]);
  const h264 = pickH264(media[0]!.codecs)!;
  t.equal(h264.name, 'H264');
  t.equal(fmtpValue(h264.fmtp, 'packetization-mode'), '1');
  t.match(fmtpValue(h264.fmtp, 'profile-level-id'), /^42e0/i, 'constrained baseline first');
  t.match(pickOpus(media[1]!.codecs), { name: 'OPUS', clock: 48000, channels: 2 });
});

t.test('a WHIP offer: audio first, sendonly; H.264 and VP8 both offered', async (t) => {
  const media = parseOffer(WHIP);
  t.same(media.map((m) => [m.kind, m.direction]), [['audio', 'sendonly'], ['video', 'sendonly']]);
  t.equal(pickH264(media[1]!.codecs)?.name, 'H264');
  t.equal(pickVp8(media[1]!.codecs)?.name, 'VP8');
});

t.test('codec choice: mode 0 never, other profiles after baseline, none when absent', async (t) => {
  const c = (pt: number, name: string, fmtp: string) => ({ pt, name, clock: 90000, channels: 1, fmtp });
  t.equal(pickH264([c(1, 'H264', 'packetization-mode=0;profile-level-id=42e01f')]), undefined, 'mode 0 is single NAL only: not taken');
  t.equal(pickH264([c(1, 'H264', 'packetization-mode=1;profile-level-id=640c1f'), c(2, 'H264', 'profile-level-id=42001f; packetization-mode=1')])?.pt, 2);
  t.equal(pickH264([c(1, 'H264', 'packetization-mode=1;profile-level-id=640c1f')])?.pt, 1, 'high profile when it is the only one');
  t.equal(pickH264([c(1, 'VP8', '')]), undefined);
  t.equal(pickOpus([{ pt: 0, name: 'PCMU', clock: 8000, channels: 1, fmtp: '' }]), undefined);
  t.equal(fmtpValue('a=1;b', 'b'), undefined);
});

t.test('garbage and hostile offers: no throw, bounded', async (t) => {
  t.same(parseOffer(''), []);
  t.same(parseOffer('hello\nworld'), []);
  t.same(parseOffer('m=\na=rtpmap:x\na=fmtp:\n'), [{ kind: '', mid: '0', direction: 'sendrecv', codecs: [] }]);
  const many = parseOffer(`v=0\n${'m=video 9 UDP/TLS/RTP/SAVPF 96\n'.repeat(1000)}`);
  t.equal(many.length, 16, 'at most 16 sections');
  const codecs = parseOffer(`m=video 9 X 96\n${'a=rtpmap:96 H264/90000\n'.repeat(1000)}`)[0]!.codecs;
  t.equal(codecs.length, 128, 'at most 128 codecs a section');
});

t.test('public addresses are added as host candidates of lower priority, same port', async (t) => {
  const sdp = 'v=0\r\na=candidate:1 1 UDP 2122317823 127.0.0.1 50000 typ host\r\na=end-of-candidates\r\n';
  const out = addPublicCandidates(sdp, ['203.0.113.5', '2001:db8::5']);
  t.same(out.split('\r\n').filter((l) => l.startsWith('a=candidate')), [
    'a=candidate:1 1 UDP 2122317823 127.0.0.1 50000 typ host',
    'a=candidate:pub1 1 UDP 2122317567 203.0.113.5 50000 typ host',
    'a=candidate:pub2 1 UDP 2122317311 2001:db8::5 50000 typ host',
  ]);
  t.equal(addPublicCandidates(sdp, []), sdp, 'unchanged without public addresses');
  t.match(addPublicCandidates(sdp.replace(/\r\n/g, '\n'), ['203.0.113.5']), /\na=candidate:pub1 /, 'LF-only SDP too');
});

t.test('RTP packets: RTCP told apart, keyframe starts found in single NAL, STAP-A and FU-A', async (t) => {
  const rtp = (payload: number[], opts: { cc?: number; ext?: number } = {}) => {
    const head = Buffer.alloc(12 + (opts.cc ?? 0) * 4);
    head[0] = 0x80 | (opts.cc ?? 0) | (opts.ext !== undefined ? 0x10 : 0);
    head[1] = 96;
    const ext = opts.ext !== undefined ? Buffer.from([0xbe, 0xde, 0, opts.ext, ...Array(opts.ext * 4).fill(0)]) : Buffer.alloc(0);
    return Buffer.concat([head, ext, Buffer.from(payload)]);
  };
  t.ok(isRtcp(Buffer.from([0x80, 200, 0, 6])), 'sender report');
  t.notOk(isRtcp(rtp([0x65])), 'RTP');
  t.ok(startsKeyframe(rtp([0x67, 0x42])), 'SPS');
  t.ok(startsKeyframe(rtp([0x65, 0x88])), 'IDR slice');
  t.notOk(startsKeyframe(rtp([0x41, 0x9a])), 'P slice');
  t.ok(startsKeyframe(rtp([0x78, 0, 10, 0x67])), 'STAP-A starting with an SPS');
  t.ok(startsKeyframe(rtp([0x7c, 0x85])), 'FU-A start of an IDR');
  t.notOk(startsKeyframe(rtp([0x7c, 0x05])), 'FU-A middle of an IDR');
  t.ok(startsKeyframe(rtp([0x67], { cc: 2 })), 'after CSRCs');
  t.ok(startsKeyframe(rtp([0x67], { ext: 1 })), 'after a header extension');
  t.notOk(startsKeyframe(Buffer.from([0x90, 96, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xbe])), 'a cut header extension');
  t.notOk(startsKeyframe(Buffer.alloc(5)), 'too short');
  t.notOk(startsKeyframe(rtp([], { ext: 0 })), 'no payload');
});
