import { Audio, PeerConnection, Video, type Track } from 'node-datachannel';

/*
 * A WHEP viewer made of node-datachannel, in a process of its own (helpers.ts `ndcViewer` forks it):
 * libdatachannel has crashed a process at its exit (SIGSEGV in its cleanup), and a test process must
 * not die of it. It makes the offer (recvonly H.264 and Opus), POSTs it, takes the answer, and
 * reports the RTP packets it gets per kind every 200 ms. `{ t: 'play', base, stream, token }`
 * -> `{ t: 'played', status, session?, answer? }`, then `{ t: 'counts', video, audio, keyframeFirst }`.
 */

interface Counts { video: number; audio: number; keyframeFirst?: boolean }
const counts: Counts = { video: 0, audio: 0 };
const held: Array<PeerConnection | Track> = []; // a track nobody references goes quiet
const send = (m: object) => { if (process.connected) process.send!(m); };
const rtcp = (b: Buffer) => b.length < 12 || (b[1]! >= 200 && b[1]! <= 207);

async function once(base: string, stream: string, token: string): Promise<object> {
  const pc = new PeerConnection('test-viewer', { iceServers: [], bindAddress: '127.0.0.1' });
  held.push(pc);
  const v = new Video('0', 'RecvOnly');
  v.addH264Codec(102);
  const a = new Audio('1', 'RecvOnly');
  a.addOpusCodec(111);
  const [vt, at] = [pc.addTrack(v), pc.addTrack(a)];
  held.push(vt, at);
  vt.onMessage((b) => {
    if (rtcp(b)) return;
    if (counts.video === 0) counts.keyframeFirst = [5, 7, 24, 28].includes(b[12 + (b[0]! & 0x0f) * 4]! & 0x1f);
    counts.video++;
  });
  at.onMessage((b) => { if (!rtcp(b)) counts.audio++; });
  pc.setLocalDescription();
  await new Promise<void>((resolve) => {
    const done = setTimeout(resolve, 3000);
    pc.onGatheringStateChange((s) => { if (s === 'complete') { clearTimeout(done); resolve(); } });
    if (pc.gatheringState() === 'complete') { clearTimeout(done); resolve(); }
  });
  const auth = { authorization: `Bearer ${token}` };
  const [name, query] = stream.split('?');
  const res = await fetch(`${base}/webrtc/${name}/whep${query === undefined ? '' : `?${query}`}`, { method: 'POST', headers: { 'content-type': 'application/sdp', ...auth }, body: pc.localDescription()!.sdp });
  const answer = await res.text();
  if (res.status !== 201) return { status: res.status };
  const session = res.headers.get('location') ?? undefined;
  try {
    pc.setRemoteDescription(answer, 'answer');
  } catch (err) {
    pc.close();
    if (session) await fetch(base + session, { method: 'DELETE', headers: auth });
    throw err;
  }
  return { status: 201, session, answer };
}

/**
 * libdatachannel as the OFFERER sometimes throws "Got a remote candidate without ICE transport" on
 * the answer (its own race, seen in bench/webrtc too): that viewer is made again.
 */
async function play(base: string, stream: string, token: string): Promise<object> {
  for (let i = 0; ; i++) {
    try {
      return await once(base, stream, token);
    } catch (err) {
      if (i >= 4 || !/without ICE transport/.test((err as Error).message)) return { status: 0, error: (err as Error).message };
    }
  }
}

process.on('message', (m: { t: string; base: string; stream: string; token: string }) => {
  if (m.t === 'play') void play(m.base, m.stream, m.token).then((r) => send({ t: 'played', ...r }));
  else if (m.t === 'close') for (const h of held) { try { h.close(); } catch { /* closed */ } }
});
setInterval(() => send({ t: 'counts', ...counts }), 200);
// the test went: leave without libdatachannel's cleanup
process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
