import t from 'tap';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { startSrtApp, srtCaller, TOKEN, type Caller } from './srt-helpers.ts';
import { waitFor } from '../../helpers/wait.ts';
import { childPids } from '../../helpers/net-proc.ts';
import { ingestHooksRef } from '../../../sdk/index.ts';

/*
 * libsrt runs in the SRT host process (a native program, addon/host.cc): a fault inside it (here the host is killed with SIGSEGV,
 * as libsrt 1.5.1 crashes on some malformed sessions: see fuzz-crashes.ts) ends the SRT
 * connections, never the service. The end hooks fire for the connections it took, the host
 * starts again on the same port, and new connections are served.
 */

/** Pids of the SRT host processes that this test process's services started (below the confinement's wrapper). */
const hostPids = (): number[] => childPids((cmd) => cmd.includes('srt-host'));

const publish = (name: string) => `${name},mode:publish,token:${encodeURIComponent(TOKEN)}`;

t.test('a crash of libsrt ends the SRT connections, not the service; the host comes back on its port', async (t) => {
  const app = await startSrtApp(t);
  const ends: string[] = [];
  app.service.app.kernel.hooks.get(ingestHooksRef).onPublishEnd.tap('test', (peer) => { ends.push(`${peer.stream}`); });
  const pub: Caller = srtCaller(app.srtPort, publish('before'));
  t.teardown(() => pub.stop());
  const packet = Buffer.alloc(188 * 7, 0xff);
  for (let i = 0; i < 7; i++) packet[i * 188] = 0x47;
  pub.send(packet);
  await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body.publisher.before !== undefined, { what: 'publisher listed' });

  const [pid] = await waitFor(() => { const p = hostPids(); return p.length === 1 ? p : undefined; }, { what: 'one SRT host process' });
  process.kill(pid!, 'SIGSEGV');

  await waitFor(() => ends.includes('before'), { what: 'the end hook of the publisher it took' });
  t.equal((await app.request('GET', '/api/v3/srt')).status, 200, 'the API answers');
  const log = await waitFor(async () => {
    const lines = (await app.request('GET', '/api/v3/log?format=raw')).body as { message: string; signal?: string }[];
    return lines.find((l) => l.message.startsWith('the SRT host process ended'));
  }, { what: 'the fault logged' });
  t.equal(log.signal, 'SIGSEGV', 'the log line names the signal');
  await waitFor(() => { const p = hostPids(); return p.length === 1 && p[0] !== pid; }, { what: 'a new host process' });
  const again = await waitFor(() => {
    try {
      return srtCaller(app.srtPort, publish('after'));
    } catch {
      return undefined;
    }
  }, { what: 'a publisher served again on the same port' });
  t.teardown(() => again.stop());
  await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body.publisher.after !== undefined, { what: 'the new publisher listed' });
  t.pass('served again after the fault');
});

t.test('the host is a confined child that holds no secret of the service', async (t) => {
  await startSrtApp(t);
  const [pid] = await waitFor(() => { const p = hostPids(); return p.length === 1 ? p : undefined; }, { what: 'the SRT host process' });
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  t.match(status, /NoNewPrivs:\s+1/, 'no new privileges (the confinement wrapper ran)');
  t.notMatch(readFileSync(`/proc/${pid}/cmdline`, 'utf8'), /passphrase|tok,en/, 'no secret on its command line (the settings go over its pipe)');
  const env = readFileSync(`/proc/${pid}/environ`, 'utf8');
  t.notMatch(env, /CORE_|tok,en|secret-passphrase/, 'nor in its environment');
});

t.test('connections that left have their memory given back by the host (issue 46.2)', async (t) => {
  const app = await startSrtApp(t, {}, { log: { level: 'debug' } });
  const pub = srtCaller(app.srtPort, publish('back'));
  t.teardown(() => pub.stop());
  const packet = Buffer.alloc(188 * 7, 0xff);
  for (let i = 0; i < 7; i++) packet[i * 188] = 0x47;
  pub.send(packet);
  await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body.publisher.back !== undefined, { what: 'publisher listed' });
  const readers = [1, 2, 3].map(() => srtCaller(app.srtPort, `back,mode:request,token:${encodeURIComponent(TOKEN)}`));
  t.teardown(() => { for (const r of readers) r.stop(); });
  await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body.subscriber.back?.length === 3, { what: 'three readers' });
  for (const r of readers) r.stop();
  // five quiet seconds after the last left, malloc_trim, told at debug level
  const line = await waitFor(async () => {
    const lines = (await app.request('GET', '/api/v3/log?format=raw')).body as { message: string; trimmed?: unknown; rss_after_mb?: number }[];
    return lines.find((l) => l.message === 'the SRT host gave memory back after connections left');
  }, { timeout: 20_000, what: 'the host gave memory back' });
  t.type(line.trimmed, 'boolean', 'malloc_trim ran');
  t.ok((line.rss_after_mb ?? 0) > 0, 'with the RSS it left');
});

t.test('an idle host is a few MB and does not wake by itself (issue 46.2)', async (t) => {
  await startSrtApp(t);
  const [pid] = await waitFor(() => { const p = hostPids(); return p.length === 1 ? p : undefined; }, { what: 'the SRT host process' });
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  t.ok(rssKb > 0 && rssKb < 15 * 1024, `its RSS is under 15 MB (${(rssKb / 1024).toFixed(1)} MB): no runtime of its own`);
  // the wake-ups of all its threads (libsrt's included) while nothing is connected: libsrt's
  // receive thread alone woke about 125 times a second, and its epoll wait in the worker 100
  const wakes = () => readdirSync(`/proc/${pid}/task`).reduce((n, tid) => {
    try {
      return n + Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      return n;
    }
  }, 0);
  await new Promise((r) => setTimeout(r, 1000));
  const before = wakes();
  await new Promise((r) => setTimeout(r, 3000));
  const woke = wakes() - before;
  t.comment(`woke ${woke}`);
  t.ok(woke < 15, `its threads woke ${woke} times in 3 s (libsrt's collector once a second, its receive thread every 4 s)`);
  // libsrt's receive thread waits 4 s for a datagram while no socket is open: a stop wakes it with
  // one of its own, so the host ends at once instead of after up to that wait
  const stopped = Date.now();
  process.kill(pid!, 'SIGTERM');
  await waitFor(() => !existsSync(`/proc/${pid}`) || /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8')), { timeout: 1500, what: 'the host ending within 1.5 s of SIGTERM' });
  t.comment(`ended in ${Date.now() - stopped} ms`);
});
