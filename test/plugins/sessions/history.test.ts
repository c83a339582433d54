import t from 'tap';
import { History, MAX_HISTORY_ENTRIES } from '../../../plugins/sessions/history.ts';

const info = (location: string, peer: string, reference: string) => ({ location, peer, reference, extra: '' });

/** The sum of every kept entry, as a reader of the file would add it up. */
function summed(h: History): { sessions: number; rx: number; tx: number } {
  const s = { sessions: 0, rx: 0, tx: 0 };
  for (const e of Object.values(h.toFile().sessions)) {
    s.sessions += e.total_sessions;
    s.rx += e.total_rxbytes;
    s.tx += e.total_txbytes;
  }
  return s;
}

t.test('the default bound is documented and used', async (t) => {
  t.equal(MAX_HISTORY_ENTRIES, 10_000);
  const h = new History();
  // a stranger's new Referer hosts: one entry each until the bound, then they fold
  for (let i = 0; i < MAX_HISTORY_ENTRIES + 500; i++) h.add(info('/memfs/a.m3u8', `spam${i}.example`, 'a'), 10, 100);
  t.equal(h.size, MAX_HISTORY_ENTRIES + 1, 'the bound, plus the folded entry of the reference');
  t.match(h.toFile().sessions['*:*:a'], { location: '*', peer: '*', reference: 'a', total_sessions: 500, total_rxbytes: 5000, total_txbytes: 50_000 });
  t.same(h.totals(), { sessions: MAX_HISTORY_ENTRIES + 500, rx: (MAX_HISTORY_ENTRIES + 500) * 10, tx: (MAX_HISTORY_ENTRIES + 500) * 100 });
});

t.test('beyond the bound: known keys still count, new ones fold per reference, beyond twice the bound into one', async (t) => {
  const h = new History(3);
  h.add(info('l', 'p1', 'a'), 1, 2);
  h.add(info('l', 'p2', 'a'), 1, 2);
  h.add(info('l', 'p3', 'b'), 1, 2);
  h.add(info('l', 'p1', 'a'), 1, 2);
  t.equal(h.toFile().sessions['l:p1:a']!.total_sessions, 2, 'a kept key counts on');
  h.add(info('l', 'p4', 'a'), 1, 2);
  h.add(info('l', 'p5', 'a'), 1, 2);
  h.add(info('l', 'p6', 'c'), 1, 2);
  h.add(info('l', 'p7', 'd'), 1, 2);
  t.same(Object.keys(h.toFile().sessions), ['l:p1:a', 'l:p2:a', 'l:p3:b', '*:*:a', '*:*:c', '*:*:d']);
  t.equal(h.toFile().sessions['*:*:a']!.total_sessions, 2);
  h.add(info('l', 'p8', 'e'), 1, 2);
  h.add(info('l', 'p9', 'f'), 1, 2);
  t.equal(h.size, 7, 'twice the bound, plus one');
  t.equal(h.toFile().sessions['*:*:*']!.total_sessions, 2);
  t.same(h.totals(), summed(h), 'the kept sum is the entries summed');
  t.equal(h.totals().sessions, 10);
  t.equal(h.totals('a').sessions, 5, 'a reference prefix still sees its folded sessions');
});

t.test('a persisted file loads into the sum and folds beyond the bound', async (t) => {
  const sessions: Record<string, unknown> = {};
  for (let i = 0; i < 6; i++) sessions[`l:p${i}:a`] = { location: 'l', peer: `p${i}`, reference: 'a', total_sessions: 2, total_rxbytes: 3, total_txbytes: '4' };
  sessions.bad = { reference: 5, total_sessions: 1 };
  sessions.worse = null;
  const h = new History(4);
  h.load({ sessions });
  t.equal(h.size, 5);
  t.same(h.totals(), { sessions: 12, rx: 18, tx: 24 });
  t.same(h.totals(), summed(h));
  t.match(h.toFile().sessions['*:*:a'], { total_sessions: 4, total_rxbytes: 6, total_txbytes: 8 });
  h.add(info('l', 'p0', 'a'), 1, 1);
  t.same(h.totals(), summed(h), 'sessions after the load add to it');
  h.load(null);
  h.load({ sessions: 'x' });
  t.equal(h.totals().sessions, 13, 'malformed files change nothing');
});

t.test('the summary is built from the bounded entries', async (t) => {
  const h = new History(2);
  h.add(info('l1', 'p1', 'a'), 1024 * 1024, 2 * 1024 * 1024);
  h.add(info('l2', 'p2', 'a'), 0, 0);
  h.add(info('l3', 'p3', 'a'), 0, 0);
  const s = h.summary();
  t.equal(s.sessions, 3);
  t.equal(s.traffic_tx_mb, 2);
  t.same(Object.keys(s.remote).sort(), ['*', 'p1', 'p2']);
  t.same(Object.keys(s.local).sort(), ['*', 'l1', 'l2']);
});

t.test('totals by reference prefix agree with the entries, folded ones included', async (t) => {
  const h = new History(50);
  let seed = 7;
  const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  const refs = ['cam1', 'cam10', 'cam2', 'studio', 'cam1_output_0'];
  for (let i = 0; i < 400; i++) h.add(info(`/l${rnd(9)}`, `p${rnd(40)}`, refs[rnd(refs.length)]!), rnd(1000), rnd(5000));
  h.load({ sessions: { x: { location: 'l', peer: 'p', reference: 'cam2', total_sessions: 3, total_rxbytes: 1, total_txbytes: 2 } } });
  for (const prefix of ['cam', 'cam1', 'cam10', 'studio', 'nothing', '*']) {
    const walked = { sessions: 0, rx: 0, tx: 0 };
    for (const e of Object.values(h.toFile().sessions)) {
      if (!e.reference.startsWith(prefix)) continue;
      walked.sessions += e.total_sessions;
      walked.rx += e.total_rxbytes;
      walked.tx += e.total_txbytes;
    }
    t.same(h.totals(prefix), walked, `prefix ${prefix}`);
  }
});
