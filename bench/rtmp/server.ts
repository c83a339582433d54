import '../../app/install.ts'; // this service's built-ins, installed into the core
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { getHeapSpaceStatistics } from 'node:v8';
import { CoreService } from '../../core/service.ts';
import { rtmpServiceRef, type RtmpService } from '../../plugins/rtmp/ref.ts';

/*
 * The benchmark's server: the real service with RTMP on, in its own process so its CPU and RSS
 * are read from /proc without the driver's. Sends `{ url, rtmpPort }` once listening. Answers
 * `'mem'` with `{ mem: process.memoryUsage(), players, spaces }` (V8 heap space sizes, MB) (after a full GC when started with
 * `--expose-gc`), and `'stop'` by closing the service.
 *
 *   node bench/rtmp/server.ts <dir>
 */
const dir = process.argv[2];
if (!dir) throw new Error('usage: server.ts <dir>');
await mkdir(join(dir, 'disk'), { recursive: true });
const configPath = join(dir, 'config.json');
await writeFile(configPath, JSON.stringify({
  address: '127.0.0.1:0', update_check: false, db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } },
  http: { threads: 0 },
  // 500 raw players come from one loopback address: above the default per-address cap (100)
  log: { level: 'warn' }, rtmp: { enable: true, address: '127.0.0.1:0', max_connections_per_address: 1000 },
}));
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CORE_')));
const core = await CoreService.start({ configPath, env });
const rtmp = core.app.kernel.services.resolve(rtmpServiceRef) as RtmpService;
process.send?.({ url: core.url, rtmpPort: rtmp.ports().rtmp });
const gc = (globalThis as { gc?: () => void }).gc;
process.on('message', (m) => {
  if (m === 'stop') void core.close().then(() => process.exit(0));
  if (m === 'mem') {
    gc?.();
    const players = rtmp.channels().reduce((n, c) => n + c.players, 0);
    const spaces = Object.fromEntries(getHeapSpaceStatistics().map((x) => [x.space_name, Math.round(x.space_size / 1048576)]));
    process.send?.({ mem: process.memoryUsage(), players, gc: Boolean(gc), spaces });
  }
});
