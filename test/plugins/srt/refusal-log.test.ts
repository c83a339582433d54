import t from 'tap';
import { LINES_PER_WINDOW, LOG_EVERY_MS, RefusalLog } from '../../../plugins/srt/refusal-log.ts';

/*
 * Issue 44.3: every refusal gets its own line (a client retrying within seconds too), with the
 * protocol; only a flood from one address past LINES_PER_WINDOW lines in LOG_EVERY_MS is counted.
 */

function capture() {
  const lines: Array<{ fields: Record<string, unknown>; msg: string }> = [];
  const log = { debug() {}, info() {}, error() {}, warn: (fields: object, msg: string) => { lines.push({ fields: fields as Record<string, unknown>, msg }); } };
  return { lines, log };
}

t.test('a retry with the same reason within the window has its own line, stream included', async (t) => {
  const { lines, log } = capture();
  const r = new RefusalLog(log);
  r.warn('10.0.0.1', { peer: '10.0.0.1:5000', stream: 'live/a', reason: 'badSecret: wrong passphrase' }, 'SRT connection refused in the handshake', 1000);
  r.warn('10.0.0.1', { peer: '10.0.0.1:5001', stream: 'live/a', reason: 'badSecret: wrong passphrase' }, 'SRT connection refused in the handshake', 1500);
  t.equal(lines.length, 2, 'two lines');
  t.same(lines.map((l) => [l.fields.protocol, l.fields.stream, l.fields.peer]), [['srt', 'live/a', '10.0.0.1:5000'], ['srt', 'live/a', '10.0.0.1:5001']]);
});

t.test('a flood from one address is counted past its lines; the count goes into its next line', async (t) => {
  const { lines, log } = capture();
  const r = new RefusalLog(log);
  for (let i = 0; i < LINES_PER_WINDOW + 30; i++) r.warn('10.0.0.9', { peer: `10.0.0.9:${i}`, stream: `s${i}`, reason: 'notFound' }, 'refused', 1000 + i);
  r.warn('10.0.0.8', { peer: '10.0.0.8:1', stream: 'other', reason: 'notFound' }, 'refused', 1100);
  t.equal(lines.filter((l) => String(l.fields.peer).startsWith('10.0.0.9')).length, LINES_PER_WINDOW, `${LINES_PER_WINDOW} lines of the flooding address`);
  t.ok(lines.some((l) => l.fields.peer === '10.0.0.8:1'), 'another address is logged meanwhile');
  r.warn('10.0.0.9', { peer: '10.0.0.9:99', stream: 'later', reason: 'notFound' }, 'refused', 1000 + LOG_EVERY_MS);
  t.match(lines.at(-1)!.fields, { peer: '10.0.0.9:99', stream: 'later', suppressed: 30 }, 'the next window: the line and the count of the ones left out');
});
