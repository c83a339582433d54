import t from 'tap';
import { LogRing, MAX_LINE_CHARS } from '../../../core/log/ring.ts';

t.test('a long line is kept shortened: each long string cut, the line parsable, the ring bounded in bytes', async (t) => {
  const ring = new LogRing(10);
  const name = 'n'.repeat(65_000);
  for (let i = 0; i < 20; i++) ring.push(`${JSON.stringify({ level: 30, time: 1, component: 'rtmp', stream: name, reason: `stream not found: ${name}`, msg: `rtmp play refused: ${name}` })}\n`);
  ring.push(`${JSON.stringify({ level: 30, time: 2, msg: 'short' })}\n`);
  const lines = ring.lines();
  t.equal(lines.length, 10);
  t.ok(lines.every((l) => l.length <= MAX_LINE_CHARS), 'every line within the bound');
  const raw = ring.raw();
  t.equal(raw.length, 10, 'every line parses');
  t.match(raw[0], { component: 'rtmp', stream: /^n{1024}\.\.\. \(65000 characters\)$/, message: /^rtmp play refused: n+\.\.\. \(65019 characters\)$/ });
  t.same(raw.at(-1), { ts: new Date(2).toISOString(), message: 'short' }, 'a short line as it was');
  const wide = Object.fromEntries(Array.from({ length: 100 }, (_v, i) => [`k${i}`, 'v'.repeat(1000)]));
  ring.push(JSON.stringify({ level: 40, time: 3, msg: 'wide', ...wide }));
  t.match(ring.raw().at(-1), { message: 'wide', shortened: /^a line of \d+ characters$/ }, 'too many fields: its message kept');
  ring.push('{"torn');
  t.equal(ring.lines().at(-1), '{"torn', 'a short torn line stays (skipped when read)');
  ring.push(`{"torn${'x'.repeat(MAX_LINE_CHARS)}`);
  t.match(JSON.parse(ring.lines().at(-1)!), { msg: /could not be kept/ });
});
