import t from 'tap';
import { EventsLog, KEEP } from '../../../plugins/srt/events-log.ts';

t.test('off by default: nothing is kept', async (t) => {
  const log = new EventsLog({ enable: false, topics: [] });
  log.add('connection:new', 'x', 1);
  t.same([log.of(1), log.global()], [{}, {}]);
});

t.test('topics filter; per connection, then global once it is gone; bounded per topic', async (t) => {
  const log = new EventsLog({ enable: true, topics: ['connection:new', 'handshake:reject'] });
  log.add('connection:new', 'publish a\nsecond line', 7);
  log.add('connection:close', 'filtered out', 7);
  t.same(Object.keys(log.of(7)), ['connection:new']);
  t.same(log.of(7)['connection:new']![0]!.msg, ['publish a', 'second line'], 'msg split at newlines');
  log.forget(7);
  t.same(log.of(7), {});
  t.equal(log.global()['connection:new']!.length, 1);
  for (let i = 0; i < KEEP + 20; i++) log.add('handshake:reject', `r${i}`);
  t.equal(log.global()['handshake:reject']!.length, KEEP);
  t.same(log.global()['handshake:reject']!.at(-1)!.msg, [`r${KEEP + 19}`], 'the newest kept');
});
