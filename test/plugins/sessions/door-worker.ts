import { parentPort, workerData } from 'node:worker_threads';
import factory from '../../../plugins/sessions/hls.ts';
import { tapContext } from '../../../core/door/tap-state.ts';

/*
 * A serving thread's copy of the sessions HLS rule, for door-threads.test.ts: the module's real
 * default export on the door's real copy context in a real worker. Waits on the shared start flag, then tries to admit its viewers
 * as fast as it can, counts a segment for each admitted one, closes (the last batch goes out) and
 * says how many it admitted.
 */
const { init, state, ids, start } = workerData as { init: unknown; state: SharedArrayBuffer; ids: string[]; start: SharedArrayBuffer };
const port = parentPort!;
let receive: (m: unknown) => void = () => {};
const copy = tapContext(init, state, {
  send: () => {}, onMessage: (fn) => { receive = fn; }, report: (r) => port.postMessage({ kind: 'report', r }),
}, false);
const taps = factory(copy.ctx);
port.on('message', (msg: { kind: string; m?: unknown }) => {
  if (msg.kind === 'broadcast') receive(msg.m);
});
port.postMessage({ kind: 'ready' });
Atomics.wait(new Int32Array(start), 0, 0);
const admitted: string[] = [];
for (const id of ids) {
  const request = { mount: '/memfs', path: '/live/x.m3u8', query: `session=${id}`, remote: '10.0.0.1', headers: {}, method: 'GET' as const };
  if (!taps.preServe!(request)) admitted.push(id);
}
for (const id of admitted) {
  const request = { mount: '/memfs', path: '/live/x_0001.ts', query: `session=${id}`, remote: '10.0.0.1', headers: {}, method: 'GET' as const };
  taps.onServed!({ request, status: 200, bytes: 100 });
}
copy.close();
port.postMessage({ kind: 'done', admitted: admitted.length });
