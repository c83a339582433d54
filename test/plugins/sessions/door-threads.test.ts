import t from 'tap';
import { Worker } from 'node:worker_threads';
import pino from 'pino';
import { SessionRegistry } from '../../../plugins/sessions/registry.ts';
import { HlsViewers } from '../../../plugins/sessions/hls-viewers.ts';
import hlsViewers from '../../../plugins/sessions/hls.ts';
import { shortId as newSessionId } from '../../../sdk/short-id.ts';
import { fsServeHooksRef } from '../../../sdk/fs-hooks.ts';
import { DoorTapModules } from '../../../core/door/tap-modules.ts';
import type { WireReport } from '../../../core/door/tap-state.ts';
import { waitFor } from '../../helpers/wait.ts';

const MAX = 50;
const PER_THREAD = 400;

t.test('two real threads racing for the places admit exactly max_sessions together; main registers each once, counts each byte once', async (t) => {
  const registry = new SessionRegistry({
    enable: true, ip_ignorelist: [], session_timeout_sec: 30, persist: false, persist_interval_sec: 0, max_bitrate_mbit: 0, max_sessions: MAX,
  }, undefined, pino({ level: 'silent' }));
  const hls = registry.collector('hls');
  const door = new HlsViewers(hls, registry.collector('hlsingress', { limits: false }), []);
  const workers: Worker[] = [];
  const modules = new DoorTapModules(fsServeHooksRef.create());
  t.teardown(() => modules.close());
  modules.toThreads = (m) => { for (const w of workers) if (m.t === 'tap') w.postMessage({ kind: 'broadcast', m: m.message }); };
  const channel = modules.attach(door.module, hlsViewers);
  door.connect(channel);
  const [wire] = modules.wire();
  const start = new SharedArrayBuffer(4);
  const ready: Promise<void>[] = [];
  const done: Promise<number>[] = [];
  for (let i = 0; i < 2; i++) {
    const ids = Array.from({ length: PER_THREAD }, () => newSessionId());
    const w = new Worker(new URL('./door-worker.ts', import.meta.url), { workerData: { init: wire!.init, state: wire!.state, ids, start } });
    workers.push(w);
    t.teardown(() => w.terminate());
    ready.push(new Promise((resolve) => w.on('message', (msg: { kind: string }) => msg.kind === 'ready' && resolve())));
    done.push(new Promise((resolve, reject) => {
      w.on('error', reject);
      w.on('message', (msg: { kind: string; r?: WireReport; admitted?: number }) => {
        if (msg.kind === 'report') modules.reportOf(wire!.name, msg.r!);
        if (msg.kind === 'done') resolve(msg.admitted!);
      });
    }));
  }
  await Promise.all(ready);
  const flag = new Int32Array(start);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
  const admitted = await Promise.all(done);
  t.equal(admitted[0]! + admitted[1]!, MAX, `admitted ${admitted.join(' + ')}`);
  // 'done' follows the last batch on each port: main has everything now
  await waitFor(() => hls.size() === MAX, { timeout: 5000, what: 'every admitted viewer registered' });
  t.equal(channel.counter.taken(), MAX, 'the reservations were given back as the sessions were registered');
  t.equal(hls.active().reduce((n, s) => n + s.bytes_tx, 0), MAX * 100, 'every segment counted once');
});
