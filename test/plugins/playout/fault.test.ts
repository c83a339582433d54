import t from 'tap';
import { randomBytes } from 'node:crypto';
import { connect, createServer, type Socket } from 'node:net';
import { request, type TestLike } from '../../helpers/app.ts';
import { startCli } from '../../helpers/cli.ts';
import { waitFor } from '../../helpers/wait.ts';
import { portRange, run, FFMPEG } from './helpers.ts';

/*
 * The fault boundary of playout (issue 27.1), against the service as its own OS process: a source
 * that sends garbage or a truncated stream, and clients of a relay's loopback port that send junk,
 * leave mid-way or never read, each end only their own run or connection, with a log line naming
 * the source or the remote; the processes, their relays and the API run on.
 */

/** A TCP source that answers every connection with `bytes` and closes; counts connections. */
async function source(t: TestLike, bytes: Buffer): Promise<{ port: number; connections: () => number }> {
  let n = 0;
  const sockets = new Set<Socket>();
  const server = createServer((s) => { n++; sockets.add(s); s.on('error', () => {}); s.on('close', () => sockets.delete(s)); s.end(bytes); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => { for (const s of sockets) s.destroy(); return new Promise<void>((r) => server.close(() => r())); });
  return { port: (server.address() as { port: number }).port, connections: () => n };
}

const toNull = [{ id: 'out', address: '-', options: ['-c', 'copy', '-f', 'null'] }];
const playout = (id: string, port: number, options: string[] = []) => ({
  id, autostart: true, reconnect: true, reconnect_delay_seconds: 1,
  input: [{ id: 'in', address: `playout:tcp://127.0.0.1:${port}`, options }], output: toNull,
});

t.test('garbage and truncated sources, junk and dead consumers: each ends alone, logged; everything else runs on', async (t) => {
  const [min, max] = await portRange(10);
  const app = await startCli(t, { playout: { enable: true, min_port: min, max_port: max } });
  const api = (method: string, path: string, body?: unknown) => request(app.url, method, path, body === undefined ? {} : { body });
  const log = async () => (await api('GET', '/api/v3/log')).body as string[];
  const ts = (await run(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25', '-t', '3',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-f', 'mpegts', 'pipe:1'])).stdout;
  const garbage = await source(t, randomBytes(64 * 1024));
  const truncated = await source(t, ts.subarray(0, Math.floor(ts.length / 2) + 77));

  const keep = { id: 'keep', autostart: true, input: [{ id: 'in', address: 'testsrc2=size=64x48:rate=5', options: ['-re', '-f', 'lavfi'] }], output: [{ id: 'out', address: '-', options: ['-f', 'null'] }] };
  for (const body of [keep, playout('junk', garbage.port), playout('cut', truncated.port, ['-f', 'mpegts'])]) {
    t.equal((await api('POST', '/api/v3/process', body)).status, 200, `${body.id} added`);
  }
  const status = async (id: string) => (await api('GET', `/api/v3/process/${id}/playout/in/status`)).body;
  const flowing = async (id: string) => {
    const before = (await status(id)).output.packet as number;
    await waitFor(async () => (await status(id)).output.packet > before + 25, { what: `${id}: its relay sending`, timeout: 30_000 });
  };
  await waitFor(() => garbage.connections() >= 3 && truncated.connections() >= 3, { what: 'both sources retried', timeout: 30_000 });
  await flowing('junk');
  await flowing('cut');

  // clients of the garbage relay's loopback port
  const port = (await status('junk')).debug.port as number;
  const open = async (read: boolean) => {
    const s = connect(port, '127.0.0.1');
    await new Promise((r) => s.once('connect', r));
    s.on('error', () => {});
    if (read) s.on('data', () => {}); else s.pause();
    t.teardown(() => { s.destroy(); });
    return s;
  };
  const junk = await open(true);
  const junkRemote = `127.0.0.1:${junk.localPort}`;
  const gone = new Promise((r) => junk.once('close', r));
  junk.write(randomBytes(4096));
  t.ok(await Promise.race([gone.then(() => true), new Promise((r) => setTimeout(() => r(false), 10_000))]), 'the junk consumer is closed');
  const midway = await open(true);
  await new Promise((r) => setTimeout(r, 300));
  midway.resetAndDestroy();
  await open(false); // never reads: its queue is bounded, the others go on
  await flowing('junk');

  for (const id of ['keep', 'junk', 'cut']) t.equal((await api('GET', `/api/v3/process/${id}/state`)).body.exec, 'running', `${id} runs`);
  t.equal(app.child.exitCode, null, 'the service lives');
  const lines = await log();
  const failed = lines.filter((l) => l.includes('playout source failed:') && l.includes(`source="tcp://127.0.0.1:${garbage.port}"`));
  t.ok(failed.length >= 1, 'the garbage source is logged with its address and ffmpeg\'s reason');
  t.ok(failed.length < garbage.connections(), `once per reason, not per retry (${failed.length} lines, ${garbage.connections()} tries)`);
  t.equal(lines.filter((l) => l.includes(`remote="${junkRemote}"`) && l.includes('playout consumer closed: it sent data')).length, 1,
    `one line naming the junk consumer ${junkRemote}`);
});
