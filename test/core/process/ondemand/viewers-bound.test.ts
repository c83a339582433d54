import t from 'tap';
import pino from 'pino';
import type { FileDoor, FileDoorChannel } from '../../../../sdk/index.ts';
import { DemandHub, MAX_DEMAND_VIEWERS } from '../../../../core/process/demand/hub.ts';
import type { ProcessEntry } from '../../../../core/process/process-entry.ts';

/*
 * The on-demand hub's viewer count, fed as the door's tap module feeds it (a message per HLS hit),
 * with a stand-in door channel and process entry (no HTTP here: the hub only counts what the
 * copies of the door report).
 */

function hubWithViewers() {
  let now = 1_000_000;
  let deliver: (m: unknown) => void = () => {};
  const channel = { onMessage: (fn: (m: unknown) => void) => { deliver = fn; }, broadcast: () => {}, close: () => {} } as unknown as FileDoorChannel;
  const door = { tap: async () => channel } as unknown as FileDoor;
  const entry = { id: 'cam', onDemand: true, demandWaiting: false, demandRunning: true, demand: () => true, resolution: undefined } as unknown as ProcessEntry;
  const hub = new DemandHub({
    entries: () => [entry], get: (id) => (id === 'cam' ? entry : undefined), filesystems: () => [], door,
    slate: {} as never, clock: { now: () => now } as never, log: pino({ level: 'silent' }), idleSeconds: 30,
    budget: { maxStartsPerClient: 0, windowSeconds: 60, maxRunning: 0 },
  });
  return {
    hub, entry,
    open: () => hub.open(),
    hit: (remote: string) => deliver({ id: 'cam', remote }),
    advance: (ms: number) => { now += ms; },
    count: () => hub.env.viewers(entry, 30_000),
  };
}

t.test('viewers of one IPv6 /64 count once', async (t) => {
  const h = hubWithViewers();
  await h.open();
  for (let i = 1; i <= 500; i++) h.hit(`2001:db8:1:2::${i.toString(16)}`);
  h.hit('[2001:db8:1:2::ffff]:5555');
  h.hit('198.51.100.7');
  h.hit('::ffff:198.51.100.7');
  t.equal(h.count(), 2, 'one /64, one IPv4 address');
  h.hub.close();
});

t.test('distinct viewers are bounded; one more waits for the oldest to be idle', async (t) => {
  const h = hubWithViewers();
  await h.open();
  t.equal(MAX_DEMAND_VIEWERS, 4096);
  for (let i = 0; i < MAX_DEMAND_VIEWERS + 1000; i++) h.hit(`2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::1`);
  t.equal(h.count(), MAX_DEMAND_VIEWERS, 'at most the bound');
  h.advance(20_000);
  h.hit('2001:db8:0:0::1'); // the first again: refreshed, now the newest
  h.advance(15_000);
  h.hit('203.0.113.1');
  t.equal(h.count(), 2, 'the idle ones left at the next viewer; the refreshed one and the new one stay');
  h.hub.close();
});
