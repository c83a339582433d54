import t from 'tap';
import { fanOut, type FanViewer, type OutTrack } from '../../../plugins/webrtc/host/fan.ts';

/* The host's fan-out of a feed's RTP, with fake tracks: payload types, keyframe starts, RTCP, closed tracks. */

const rtp = (pt: number, payload: number[], marker = false) => Buffer.from([0x80, (marker ? 0x80 : 0) | pt, 0, 1, 0, 0, 0, 1, 0, 0, 0, 9, ...payload]);

class Track implements OutTrack {
  sent: Buffer[] = [];
  open = true;
  throws = false;
  isOpen() { return this.open; }
  sendMessageBinary(b: Buffer) {
    if (this.throws) throw new Error('libdatachannel error while sending track message: Track is closed');
    this.sent.push(b);
    return true;
  }
}

const viewer = (pt: number, waitKey = true): FanViewer & { track: Track; id: string } => {
  const track = new Track();
  return { id: `v${pt}`, track, connected: true, tx: 0, video: { track, pt, waitKey } };
};

t.test('video from a keyframe on, with each viewer\'s payload type; one copy per type', async (t) => {
  const a = viewer(96);
  const b = viewer(102);
  const c = viewer(102);
  const p = rtp(96, [0x41, 0x9a]);
  t.equal(fanOut([a, b, c], 'video', p), undefined);
  t.equal(a.track.sent.length, 0, 'a P slice before any keyframe is not sent');
  const key = rtp(96, [0x67, 0x42], true);
  fanOut([a, b, c], 'video', key);
  t.equal(a.track.sent[0], key, 'the same Buffer where the type matches');
  t.equal(b.track.sent[0]![1], 0x80 | 102, 'the marker kept, the type rewritten');
  t.equal(b.track.sent[0], c.track.sent[0], 'one copy for both viewers of type 102');
  t.equal(key[1], 0x80 | 96, 'the feed\'s packet unchanged');
  fanOut([a, b, c], 'video', p);
  t.equal(a.track.sent.length, 2, 'then everything');
  t.equal(a.tx, key.length + p.length, 'bytes counted');
});

t.test('RTCP goes to every connected viewer as it is, even before its keyframe', async (t) => {
  const a = viewer(102);
  const sr = Buffer.from([0x80, 200, 0, 6, 0, 0, 0, 1, 0, 0, 0, 0]);
  fanOut([a], 'video', sr);
  t.equal(a.track.sent[0], sr);
  t.equal(fanOut([a], 'video', Buffer.alloc(5)), undefined, 'a runt is dropped');
  t.equal(a.track.sent.length, 1);
});

t.test('a viewer whose track closed under it is returned to be ended; the others get the packet', async (t) => {
  const a = viewer(96, false);
  const b = viewer(96, false);
  const c = viewer(96, false);
  const d = viewer(96, false);
  a.track.throws = true;
  c.track.open = false;
  d.connected = false;
  const p = rtp(96, [0x41]);
  t.same(fanOut([a, b, c, d], 'video', p)?.map((v) => v.id), ['v96'], 'the throwing one');
  t.equal(b.track.sent.length, 1, 'the next viewer still gets it');
  t.equal(c.track.sent.length + d.track.sent.length, 0, 'nothing to a closed track or an unconnected viewer');
  t.equal(fanOut([b], 'audio', p), undefined, 'a viewer without that kind gets nothing');
});
