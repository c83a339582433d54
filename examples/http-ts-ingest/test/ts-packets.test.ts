import t from 'tap';
import { TsPackets, TS_PACKET } from '../ts-packets.ts';

t.test('a body in chunks of any size goes on as whole TS packets, aligned chunks uncopied', async (t) => {
  const cut = new TsPackets();
  const aligned = Buffer.alloc(TS_PACKET * 2, 1);
  t.equal(cut.take(aligned)?.buffer, aligned.buffer, 'an aligned chunk is passed on as it is');
  t.equal(cut.take(Buffer.alloc(100, 2)), undefined, 'less than a packet: nothing yet');
  const next = cut.take(Buffer.alloc(TS_PACKET, 3))!;
  t.equal(next.length, TS_PACKET, 'the split packet, completed');
  t.same([next[0], next[99], next[100]], [2, 2, 3], 'in order');
  t.equal(cut.take(Buffer.alloc(TS_PACKET - 100, 4))?.length, TS_PACKET, 'the rest completes the next one');
});
