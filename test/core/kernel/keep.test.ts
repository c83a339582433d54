import t from 'tap';
import { KeptResources } from '../../../core/kernel/keep.ts';

/*
 * The registry behind `ctx.keep` (issue 44.1): what a reload parks, claims, replaces and closes,
 * and in which order, without a service around it.
 */

/** One app's close steps, as the lifecycle runs them (newest first). */
function app() {
  const steps: Array<() => Promise<void>> = [];
  return { onClose: (fn: () => Promise<void>) => { steps.push(fn); }, close: async () => { for (const f of steps.reverse()) await f(); } };
}

function resource(log: string[], name: string) {
  return { open: async () => { log.push(`open ${name}`); return { name }; }, close: async (r: { name: string }) => { log.push(`close ${r.name}`); } };
}

t.test('unchanged settings: the same resource, not opened again; changed: the old one closed before the new one opens', async (t) => {
  const kept = new KeptResources();
  const log: string[] = [];
  const a = app();
  const first = await kept.keep('rtmp', { key: 'server', settings: { address: ':1935' }, ...resource(log, 'a') }, a.onClose);
  kept.park();
  await a.close();
  const b = app();
  const again = await kept.keep('rtmp', { key: 'server', settings: { address: ':1935' }, ...resource(log, 'b') }, b.onClose);
  await kept.settle();
  t.equal(again, first, 'the kept resource itself');
  t.same(log, ['open a'], 'opened once, never closed');
  kept.park();
  await b.close();
  const c = app();
  const moved = await kept.keep('rtmp', { key: 'server', settings: { address: ':1936' }, ...resource(log, 'c') }, c.onClose);
  await kept.settle();
  t.equal(moved.name, 'c');
  t.same(log, ['open a', 'close a', 'open c'], 'a moved listener: the old one closed first');
  await c.close();
  t.same(log, ['open a', 'close a', 'open c', 'close c'], 'a close outside a reload closes it at its onClose point');
  t.same(kept.keys(), []);
});

t.test('what the new app does not claim is closed when the reload settles; a failed open retries once without it', async (t) => {
  const kept = new KeptResources();
  const log: string[] = [];
  const a = app();
  await kept.keep('srt', { key: 'host', settings: {}, ...resource(log, 'srt') }, a.onClose);
  await kept.keep('rtmp', { key: 'server', settings: {}, ...resource(log, 'rtmp') }, a.onClose);
  kept.park();
  await a.close();
  t.same(log, ['open srt', 'open rtmp'], 'parked, not closed');
  const b = app();
  await kept.keep('rtmp', { key: 'server', settings: {}, ...resource(log, 'x') }, b.onClose);
  await kept.settle();
  t.same(log, ['open srt', 'open rtmp', 'close srt'], 'the unclaimed one closed at the end');

  kept.park();
  await b.close();
  const c = app();
  let tries = 0;
  const busy = { open: async () => { if (++tries === 1) throw new Error('EADDRINUSE'); log.push('open other'); return { name: 'other' }; }, close: async () => {} };
  await kept.keep('other', { key: 'l', settings: {}, ...busy }, c.onClose);
  t.equal(tries, 2, 'tried again');
  t.same(log.slice(-2), ['close rtmp', 'open other'], 'after the parked resources were closed (one may hold the port)');
  await kept.settle();
  await c.close();
});

t.test('a key kept twice by one app is an error', async (t) => {
  const kept = new KeptResources();
  const a = app();
  await kept.keep('p', { key: 'k', settings: {}, ...resource([], 'a') }, a.onClose);
  await t.rejects(kept.keep('p', { key: 'k', settings: {}, ...resource([], 'b') }, a.onClose), /kept twice/);
  await a.close();
});

t.test('a parked resource whose port the next config gives to another key is closed before the next app; its own key keeps it', async (t) => {
  const kept = new KeptResources();
  const log: string[] = [];
  const a = app();
  const holds = () => [{ key: 'rtmp.address', proto: 'tcp' as const, port: 41935 }];
  await kept.keep('rtmp', { key: 'server', settings: { address: ':0' }, ...resource(log, 'a'), holds }, a.onClose);
  kept.park();
  await a.close();
  await kept.displace([{ key: 'rtmp.address', proto: 'tcp', port: 41935 }, { key: 'srt.address', proto: 'udp', port: 41935 }]);
  t.same(log, ['open a'], 'the same key, or the same port over another protocol: kept');
  await kept.displace([{ key: 'address', proto: 'tcp', port: 41935 }]);
  t.same(log, ['open a', 'close a'], 'the API moving onto its port: closed');
  const b = app();
  await kept.keep('rtmp', { key: 'server', settings: { address: ':0' }, ...resource(log, 'b'), holds }, b.onClose);
  await kept.settle();
  t.same(log, ['open a', 'close a', 'open b'], 'the next app opens a new one');
  await b.close();
});
