import t from 'tap';
import { readFileSync } from 'node:fs';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg } from '../srt/srt-helpers.ts';
import { SOURCE, startWebrtcApp, TOKEN } from './helpers.ts';

/*
 * Hostile and broken offers (classes, not examples): truncated, mangled lines, wrong directions,
 * no usable codec, absurd values, binary noise. Each gets a 4xx or a 201 with an Error body or an
 * answer, never a 500; the service goes on; a session made for a broken offer ends by its deadline.
 */

const WHEP = readFileSync(new URL('./fixtures/chromium-156-whep-offer.sdp', import.meta.url), 'utf8');
const WHIP = readFileSync(new URL('./fixtures/chromium-156-whip-offer.sdp', import.meta.url), 'utf8');

function mangled(seed: number): string[] {
  let x = seed;
  const rnd = (n: number) => { x = (x * 1103515245 + 12345) & 0x7fffffff; return x % n; };
  const lines = WHEP.split('\r\n');
  const out: string[] = [];
  for (let i = 0; i < 12; i++) {
    const l = [...lines];
    const k = rnd(l.length);
    const kind = rnd(6);
    if (kind === 0) l.splice(k, 1);
    else if (kind === 1) l[k] = l[k]!.slice(0, rnd(l[k]!.length + 1));
    else if (kind === 2) l[k] = `${l[k]}${'9'.repeat(rnd(400))}`;
    else if (kind === 3) l.splice(k, 0, l[k]!);
    else if (kind === 4) l[k] = l[k]!.replace(/\d+/g, () => String(rnd(2 ** 31)));
    else l[k] = Buffer.from(Array.from({ length: rnd(200) }, () => 32 + rnd(95))).toString('latin1');
    out.push(l.join('\r\n'));
  }
  return out;
}

t.test('broken offers get a clear answer and never stop the service', async (t) => {
  const app = await startWebrtcApp(t, { connect_timeout_seconds: 2 });
  ffmpeg(t, [...SOURCE, '-f', 'flv', `${app.rtmpBase}/live/cam`], 180_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body?.length === 1, { timeout: 30_000, what: 'RTMP publisher' });
  const cases: Array<[string, string, string]> = [
    ['whep', 'truncated in the middle', WHEP.slice(0, WHEP.length / 2)],
    ['whep', 'only the session part', WHEP.split('m=')[0]!],
    ['whep', 'a sendonly offer to play', WHEP.replace(/a=recvonly/g, 'a=sendonly')],
    ['whep', 'no H.264 and no Opus', WHEP.replace(/H264|opus/gi, 'XXXX')],
    ['whep', 'no ICE credentials', WHEP.replace(/a=ice-(ufrag|pwd):.*\r\n/g, '')],
    ['whep', 'no fingerprint', WHEP.replace(/a=fingerprint:.*\r\n/g, '')],
    ['whep', 'duplicate mids', WHEP.replace(/a=mid:1/g, 'a=mid:0')],
    ['whep', 'payload types out of range', WHEP.replace(/a=rtpmap:(\d+)/g, 'a=rtpmap:99999')],
    ['whep', 'a huge mid', WHEP.replace('a=mid:0', `a=mid:${'x'.repeat(30_000)}`)],
    ['whep', 'candidates of garbage', WHEP.replace(/a=candidate:.*\r\n/g, 'a=candidate:x y z\r\na=candidate:1 1 udp 1 999.1.1.1 70000 typ host\r\n')],
    ['whip', 'a recvonly offer to publish', WHIP.replace(/a=sendonly/g, 'a=recvonly')],
    ['whip', 'VP8 and Opus only', WHIP.replace(/H264/g, 'XXXX')],
    // RFC 7587: Opus's fmtp is optional (libdatachannel's default profile answers it)
    ['whep', 'Opus without fmtp', WHEP.replace(/a=fmtp:111 .*\r\n/g, '')],
    ['whip', 'Opus without fmtp to publish', WHIP.replace(/a=fmtp:111 .*\r\n/g, '')],
    ['whep', 'binary noise', `v=0\r\n${Buffer.from(Array.from({ length: 2000 }, (_, i) => (i * 37) % 256)).toString('latin1')}`],
    ...mangled(7).map((s, i): [string, string, string] => ['whep', `mangled ${i}`, s]),
  ];
  const statuses: Record<string, number> = {};
  for (const [kind, name, body] of cases) {
    const stream = kind === 'whip' ? `live/pub${Object.keys(statuses).length}` : 'live/cam';
    const r = await app.request('POST', `/webrtc/${stream}/${kind}`, { raw: body, headers: { 'content-type': 'application/sdp', authorization: `Bearer ${TOKEN}` } });
    statuses[name] = r.status;
    t.ok(r.status === 201 || (r.status >= 400 && r.status < 500), `${name}: ${r.status}`);
    if (r.status !== 201) t.match(r.body, { code: r.status, message: String }, `${name}: an Error body`);
  }
  t.equal(statuses['no H.264 and no Opus'], 406);
  t.equal(statuses['a sendonly offer to play'], 400);
  t.equal(statuses['a recvonly offer to publish'], 406);
  t.equal(statuses['VP8 and Opus only'], 201, 'VP8 is taken from a publisher (encoded to H.264)');
  t.equal(statuses['Opus without fmtp'], 201, 'an Opus offer without fmtp is answered');
  t.equal(statuses['Opus without fmtp to publish'], 201);
  t.equal((await app.request('GET', '/api/v3/rtmp')).status, 200, 'the service answers');
  await waitFor(async () => (await app.request('GET', '/api/v3/webrtc')).body.length === 0, { timeout: 20_000, what: 'every session of a broken offer ended' });
});
