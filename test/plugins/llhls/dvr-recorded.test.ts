// The DVR's recorded segments remuxed when asked (plugins/llhls/dvr-recorded.ts), in-process: at
// most two reads and remuxes at once, one read per segment however many ask, the last few kept
// within a count and a byte bound, failed reads not kept.
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlvToTs } from '../../../core/streams/remux/index.ts';
import { MAX_REMUXING, RecordedRemux } from '../../../plugins/llhls/dvr-recorded.ts';
import { flvPackets, makeFlv, noFfmpeg } from './fmp4-helpers.ts';
import { waitFor } from '../../helpers/wait.ts';

/** One recorded segment (the first second of an ffmpeg-made stream through the core's TS remux). */
function segment(dir: string): Buffer {
  const remux = new FlvToTs();
  const out: Buffer[] = [];
  for (const p of flvPackets(makeFlv(dir, 'av'))) {
    if (p.kind === 'keyframe' && out.length > 0) break;
    const ts = remux.push(p);
    if (ts) out.push(ts);
  }
  return Buffer.concat(out);
}

t.test('reads and remuxes within its bounds', { skip: noFfmpeg }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dvr-recorded-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const ts = segment(dir);
  const reads: number[] = [];
  const held: Array<() => void> = [];
  let hold = true;
  const read = async (start: number) => {
    reads.push(start);
    if (hold) await new Promise<void>((r) => held.push(r));
    return start === 404 ? undefined : start === 500 ? Promise.reject(new Error('disk gone')) : ts;
  };
  const rr = new RecordedRemux(read, { kept: 3 });

  // five askers of three segments: two reads at once, one per segment
  const asks = [1, 2, 3, 1, 2].map((s) => rr.get(s));
  await waitFor(() => held.length === MAX_REMUXING, { what: 'the first reads' });
  t.same(reads, [1, 2], 'two at once, the third waits');
  t.equal(rr.running, MAX_REMUXING);
  held.shift()!();
  await waitFor(() => reads.length === 3, { what: 'the third read' });
  t.equal(rr.running, MAX_REMUXING, 'a finished one hands its turn on');
  hold = false;
  for (const h of held.splice(0)) h();
  const got = await Promise.all(asks);
  t.ok(got.every((g) => g !== undefined && g.fragment.toString('latin1', 4, 8) === 'moof'), 'each a movie fragment');
  t.equal(got[0], got[3], 'one answer for every asker of a segment');
  t.equal(rr.running, 0);

  // kept: asked again, not read again; beyond three the oldest go
  await rr.get(3);
  t.same(reads, [1, 2, 3], 'kept ones are not read again');
  await rr.get(4);
  await rr.get(1);
  t.same(reads, [1, 2, 3, 4, 1], 'the oldest left for the fourth');
  t.ok(rr.keptBytes > 0 && rr.keptBytes <= 3 * (got[0]!.init.length + got[0]!.fragment.length), `bytes kept: ${rr.keptBytes}`);

  // failed reads answer nothing and are not kept
  t.equal(await rr.get(404), undefined, 'a segment that is not there');
  t.equal(await rr.get(500), undefined, 'a read that fails');
  await rr.get(404);
  t.same(reads.filter((r) => r === 404).length, 2, 'read again on the next ask');

  // a byte bound below two segments keeps one
  const one = got[0]!.init.length + got[0]!.fragment.length;
  const small = new RecordedRemux(read, { bytes: Math.floor(one * 1.5) });
  await small.get(10);
  await small.get(11);
  t.equal(small.keptBytes, one, 'one kept within the byte bound');
  const before = reads.length;
  await small.get(11);
  await small.get(10);
  t.equal(reads.length, before + 1, 'the newest kept, the older read again');
  const none = new RecordedRemux(read, { bytes: one - 1 });
  await none.get(12);
  t.equal(none.keptBytes, 0, 'a segment bigger than the bound is answered, not kept');
});
