import t from 'tap';
import { locateInputs, relayInput, replaceInputs, splitOptions } from '../../../plugins/playout/args.ts';
import { PortPool } from '../../../plugins/playout/ports.ts';
import { validatePlayout } from '../../../plugins/playout/schema.ts';

const inputs = [
  { id: 'cam', options: ['-rw_timeout', '5000000', '-thread_queue_size', '512'] },
  { id: 'logo', options: [] },
];
const args = [
  '-loglevel', 'level+info', '-err_detect', 'ignore_err',
  '-rw_timeout', '5000000', '-thread_queue_size', '512', '-i', 'playout:rtmp://localhost:1935/live/cam',
  '-i', 'logo.png',
  '-c', 'copy', '-f', 'hls', 'http://127.0.0.1/memfs/x.m3u8',
];

t.test('locateInputs finds each input behind the global options', async (t) => {
  const found = locateInputs(args, inputs)!;
  t.same(found.map((f) => [f.id, f.start, f.at, f.address]), [
    ['cam', 4, 8, 'playout:rtmp://localhost:1935/live/cam'],
    ['logo', 10, 10, 'logo.png'],
  ]);
  t.same(found[0]!.options, ['-rw_timeout', '5000000', '-thread_queue_size', '512']);
  t.same(locateInputs(['-x', '1', ...args], inputs)!.map((f) => f.at), [10, 12], 'arguments prepended by another tap');
  t.equal(locateInputs(['-c', 'copy', 'out.ts'], inputs), undefined, 'not that shape');
});

t.test('splitOptions: decoding options stay with the process, reading options go to the relay', async (t) => {
  t.same(splitOptions(['-re', '-f', 'flv', '-rw_timeout', '5000000', '-thread_queue_size', '512', '-c:v', 'h264', '-itsoffset', '-1', '-hwaccel', 'auto']), {
    relay: ['-re', '-f', 'flv', '-rw_timeout', '5000000'],
    process: ['-thread_queue_size', '512', '-c:v', 'h264', '-itsoffset', '-1', '-hwaccel', 'auto'],
  });
  t.same(splitOptions([]), { relay: [], process: [] });
});

t.test('replaceInputs rewrites a playout input into the relay socket, other inputs untouched', async (t) => {
  const [cam] = locateInputs(args, inputs)!;
  const out = replaceInputs(args, [{ input: cam!, with: relayInput(['-thread_queue_size', '512'], 7001) }]);
  t.same(out, [
    '-loglevel', 'level+info', '-err_detect', 'ignore_err',
    '-thread_queue_size', '512', '-f', 'mpegts', '-i', 'tcp://127.0.0.1:7001',
    '-i', 'logo.png',
    '-c', 'copy', '-f', 'hls', 'http://127.0.0.1/memfs/x.m3u8',
  ]);
});

t.test('PortPool hands out the lowest free port, skips busy ones, reuses released ones', async (t) => {
  const pool = new PortPool(7000, 7002);
  t.equal(pool.acquire(), 7000);
  t.equal(pool.acquire(new Set([7001])), 7002, 'a port taken on the machine is skipped');
  t.equal(pool.acquire(), 7001);
  t.equal(pool.acquire(), undefined, 'exhausted');
  pool.release(7001);
  t.equal(pool.acquire(), 7001, 'released: lowest free first');
  t.equal(pool.used, 3);
});

t.test('validatePlayout: min_port must be below max_port when enabled (reference 6.2)', async (t) => {
  t.same(validatePlayout({ enable: true, min_port: 7000, max_port: 7000 }), { min_port: ['must be smaller than playout.max_port'] });
  t.same(validatePlayout({ enable: true, min_port: 7000, max_port: 7010 }), {});
  t.same(validatePlayout({ enable: false, min_port: 0, max_port: 0 }), {}, 'disabled: not checked');
});
