import t from 'tap';
import { Writable } from 'node:stream';
import { connect, type Socket } from 'node:net';
import pino from 'pino';
import { Consumers, MAX_CONSUMERS } from '../../../../plugins/playout/relay/consumers.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { freePort } from './media.ts';

/** A logger whose lines the test reads. */
function capture() {
  const lines: { msg: string; remote?: string }[] = [];
  const sink = new Writable({ write(c: Buffer, _e, done) { for (const l of c.toString().split('\n')) if (l) lines.push(JSON.parse(l)); done(); } });
  return { log: pino({ level: 'debug' }, sink), lines };
}

function packet(key: boolean): Buffer {
  const p = Buffer.alloc(188, 0xff);
  p.set([0x47, 0x41, 0x00, key ? 0x30 : 0x10]);
  return p;
}

async function client(t: Tap, port: number, read = true): Promise<{ s: Socket; remote: string; bytes: () => number; closed: () => boolean }> {
  const s = connect(port, '127.0.0.1');
  await new Promise((r) => s.once('connect', r));
  let bytes = 0;
  let closed = false;
  s.on('error', () => {});
  s.on('close', () => { closed = true; });
  if (read) s.on('data', (d: Buffer) => { bytes += d.length; });
  else s.pause();
  t.teardown(() => { s.destroy(); });
  return { s, remote: `127.0.0.1:${s.localPort}`, bytes: () => bytes, closed: () => closed };
}

interface Tap { teardown(fn: () => unknown): void }

t.test('a consumer that sends data is closed with a log line naming it; the others go on', async (t) => {
  const { log, lines } = capture();
  const port = await freePort();
  const c = new Consumers(port, log, () => []);
  await c.listen();
  t.teardown(() => c.close());
  const good = await client(t, port);
  const junk = await client(t, port);
  await waitFor(() => c.count === 2, { what: 'both connected' });
  junk.s.write('GET / HTTP/1.1\r\n\r\n');
  await waitFor(() => junk.closed(), { what: 'the junk sender closed' });
  t.equal(c.count, 1, 'one consumer left');
  t.same(lines.filter((l) => l.remote === junk.remote).map((l) => l.msg).filter((m) => m.includes('closed')),
    ['playout consumer closed: it sent data (a consumer only reads)'], 'one line naming it');
  c.packet(packet(true), true);
  c.flush();
  await waitFor(() => good.bytes() === 188, { what: 'the other consumer served' });
});

t.test('a consumer that reads nothing while its queue waits is closed after the stall time; a reading one goes on', async (t) => {
  const { log, lines } = capture();
  const port = await freePort();
  const c = new Consumers(port, log, () => [], { stallMs: 1000 });
  await c.listen();
  t.teardown(() => c.close());
  const good = await client(t, port);
  const stuck = await client(t, port, false);
  await waitFor(() => c.count === 2, { what: 'both connected' });
  let sent = 0;
  const deadline = Date.now() + 60_000;
  // the stuck one's kernel buffers fill first; from then on its queue waits, and after 1 s it is closed
  while (c.count === 2 && Date.now() < deadline) {
    for (let i = 0; i < 500; i++) { c.packet(packet(i === 0), i === 0); sent += 188; }
    c.flush();
    await new Promise((r) => setTimeout(r, 20));
  }
  t.equal(c.count, 1, 'the stuck consumer is gone');
  t.same(lines.filter((l) => l.remote === stuck.remote && l.msg.includes('closed')).map((l) => l.msg),
    ['playout consumer closed: it read nothing for 1 s'], 'one line naming it');
  await waitFor(() => good.bytes() >= sent, { what: 'the reading consumer got everything' });
});

t.test(`more than ${MAX_CONSUMERS} consumers: the extra ones are refused with a log line`, async (t) => {
  const { log, lines } = capture();
  const port = await freePort();
  const c = new Consumers(port, log, () => []);
  await c.listen();
  t.teardown(() => c.close());
  for (let i = 0; i < MAX_CONSUMERS; i++) await client(t, port);
  await waitFor(() => c.count === MAX_CONSUMERS, { what: 'all connected' });
  const extra = await client(t, port);
  await waitFor(() => extra.closed(), { what: 'the extra one closed' });
  t.equal(c.count, MAX_CONSUMERS);
  t.same(lines.filter((l) => l.remote === extra.remote).map((l) => l.msg), [`playout consumer refused: ${MAX_CONSUMERS} consumers connected`]);
});
