import t from 'tap';
import { createRequire } from 'node:module';
import { loadWireLayer, type MediaPacket, type WireRequest } from '../../../plugins/rtmp/nms-adapter.ts';
import { amf0, command, invoke, message, session, setChunkSize } from './wire-kit.ts';

/*
 * The wire layer is ours (issue 45.5): handshake, chunk stream and commands; node-media-server
 * gives only its AMF0 codec and FLV tag classifier, called as they are. Nothing of the package is
 * replaced, so another user of it in the same process (or a second copy of this plugin) sees it
 * unchanged.
 */

const require = createRequire(import.meta.url);
const MODULES = ['core/logger.js', 'protocol/amf.js', 'protocol/flv.js'];

/** Own data properties of each module's export and of its prototype (the class's, for a class): names and values. */
function snapshot(): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const m of MODULES) {
    const exp = require(`node-media-server/src/${m}`) as object;
    const proto = (typeof exp === 'function' ? exp.prototype : Object.getPrototypeOf(exp)) as object;
    for (const [where, target] of [['', exp], ['prototype.', proto]] as const) {
      for (const [k, d] of Object.entries(Object.getOwnPropertyDescriptors(target))) out.set(`${m}:${where}${k}`, 'value' in d ? d.value : d.get);
    }
  }
  return out;
}

function handshake(): Buffer {
  return Buffer.concat([Buffer.from([3]), Buffer.alloc(1536, 7), Buffer.alloc(1536, 9)]);
}

function run(bytes: Buffer[], maxMediaMessage = 8 << 20) {
  const seen = { output: 0, publish: [] as WireRequest[], play: [] as WireRequest[], packets: [] as MediaPacket[], error: null as string | null };
  const wire = loadWireLayer().createWire({
    output: (b) => { seen.output += b.length; },
    publish: (r) => seen.publish.push(r),
    play: (r) => seen.play.push(r),
    packet: (p) => seen.packets.push(p),
  }, { maxMediaMessage });
  for (const b of bytes) seen.error ??= wire.feed(b);
  return seen;
}

const video = (size: number) => message(Buffer.concat([Buffer.from([0x17, 1, 0, 0, 0]), Buffer.alloc(size - 5, 1)]), { type: 9, cid: 5, streamId: 1, timestamp: 40 });

t.test('node-media-server is used as it is: no member of the package replaced', async (t) => {
  const before = snapshot();
  const all = Buffer.concat([handshake(), session(1935, 'live', 'x?token=a', 'publish'), video(300)]);
  const seen = run([all]);
  t.equal(seen.error, null);
  t.same(seen.publish, [{ app: 'live', name: 'x', query: { token: 'a' } }]);
  t.equal(seen.packets.length, 1);
  t.match(seen.packets[0], { kind: 'keyframe', type: 9, codec: 7, timestamp: 40 });
  const after = snapshot();
  const changed = [...after.keys()].filter((k) => before.get(k) !== after.get(k) || !before.has(k));
  t.same(changed, [], 'every export and prototype member as the package has it');
  t.notOk(Object.keys(require.cache).some((k) => k.endsWith('/node-media-server/src/protocol/rtmp.js')), 'its connection class is never loaded');
});

t.test('one byte at a time reads as the whole: headers split across reads wait for their rest', async (t) => {
  const all = Buffer.concat([handshake(), session(1935, 'live', 'y', 'play'), video(5000)]);
  const whole = run([all]);
  const bytes = run([...all].map((b) => Buffer.from([b])));
  t.equal(whole.error, null);
  t.same(bytes.play, whole.play);
  t.same(bytes.packets.map((p) => p.body.length), [5000]);
  t.equal(bytes.output, whole.output, 'the same answers');
});

t.test('the bounds refuse before anything is allocated', async (t) => {
  t.match(run([handshake(), video(9 << 20)]).error, /message of type 9 with \d+ bytes \(at most 8388608\)/);
  t.match(run([handshake(), message(Buffer.alloc(2), { type: 1, cid: 2 })]).error, /protocol control message 1 with 2 bytes/);
  t.match(run([handshake(), setChunkSize(0)]).error, /Set Chunk Size 0/);
  const streams = Buffer.concat(Array.from({ length: 65 }, (_, i) => message(Buffer.alloc(1), { type: 9, cid: 3 + i })));
  t.match(run([handshake(), streams]).error, /more than 64 chunk streams/);
  // a type 0 header on a chunk stream whose message is not complete: the message would change size under the reader
  const half = message(Buffer.alloc(300), { type: 9, cid: 5 }).subarray(0, 12 + 128);
  t.match(run([handshake(), half, message(Buffer.alloc(10), { type: 9, cid: 5 })]).error, /a message header in the middle of a message/);
  const garbage = invoke(command('connect', 1, amf0.of({ app: 'live', tcUrl: 'not a url' })));
  t.match(run([handshake(), garbage]).error, /parser failed \(TypeError: Invalid URL\)/, 'what the parser throws ends the connection');
});

t.test('what the AMF decoder says of unknown commands and fields never reaches stdout', async (t) => {
  const lines: unknown[] = [];
  const log = console.log;
  console.log = (...args: unknown[]) => { lines.push(args); };
  t.teardown(() => { console.log = log; });
  const unknown = invoke(Buffer.concat([amf0.num(1), amf0.num(1)]));
  const strict = invoke(command('releaseStream', 2, amf0.null(), amf0.strict([amf0.num(1), amf0.str('x')])));
  const badField = invoke(Buffer.concat([amf0.str('FCPublish'), amf0.num(3), Buffer.from([0x0e, 1, 2, 3])]));
  const seen = run([handshake(), ...Array.from({ length: 200 }, () => unknown), strict, session(1935, 'live', 'z', 'publish')]);
  // an unknown AMF type: the decoder gives up on the command (what it throws ends this connection only)
  const broken = run([handshake(), badField]);
  console.log = log;
  t.same(lines, [], 'no line printed');
  t.equal(seen.error, null, 'unknown commands and strict arrays: the connection goes on');
  t.same(seen.publish.map((r) => r.name), ['z']);
  t.type(broken.error ?? '', 'string');
  t.equal(console.log, log, 'console.log is given back');
});

t.test('the unfinished messages of every connection together are bounded; what a connection held goes back when it closes', async (t) => {
  const budget = { held: 0, max: 3000 };
  const layer = loadWireLayer();
  const events = { output: () => {}, publish: () => {}, play: () => {}, packet: () => {} };
  const open = () => layer.createWire(events, { maxMediaMessage: 8 << 20, unfinished: budget });
  // a 5,000-byte video message in 128-byte chunks, the last chunk left out: 4,992 bytes held
  const unfinished = video(5000).subarray(0, video(5000).length - 9);
  const a = open();
  t.equal(a.feed(handshake()), null);
  t.equal(a.feed(unfinished.subarray(0, 12 + 128 * 10 + 9)), null, 'under the bound');
  t.ok(budget.held > 1000 && budget.held <= 1500, `held ${budget.held}`);
  const b = open();
  b.feed(handshake());
  t.match(b.feed(unfinished), /the service holds \d+ bytes of unfinished RTMP messages \(at most 3000\)/, 'another connection passes the bound: closed');
  b.close();
  const before = budget.held;
  t.ok(before <= 3000, `never more than the bound (${before})`);
  a.close();
  t.equal(budget.held, before - 1280, 'a closed connection gives its bytes back');
  b.close();
  // a whole message never counts: it is handed on in the read that completes it
  const c = open();
  c.feed(handshake());
  t.equal(c.feed(video(100)), null);
  t.equal(budget.held, before - 1280);
  const d = open();
  d.feed(handshake());
  t.equal(d.feed(video(2500)), null, 'a message completed within one read');
  t.equal(budget.held, before - 1280, 'and leaves nothing held');
});
