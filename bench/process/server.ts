import '../../app/install.ts'; // this service's built-ins, installed into the core
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CoreService } from '../../core/service.ts';

/**
 * The benchmarks' server side, run in its own process so its CPU and memory can be read from
 * /proc without the driver's: the real service with the default plugins and log level. With
 * a count, db.json is written first with that many stopped processes (start-up and list cost).
 *
 *   node --import tsx bench/process/server.ts <dir> [stored processes]
 *
 * Sends `{ url, startupMs }` to the parent once listening; `stop` closes it.
 */

export function storedProcess(i: number) {
  const id = `bench-${String(i).padStart(4, '0')}`;
  const now = Math.floor(Date.now() / 1000);
  return {
    id, reference: `ref-${i % 10}`, created_at: now, updated_at: now, order: 'stop',
    config: {
      id, type: 'encoder', reference: `ref-${i % 10}`, ffversion: '^5.1.0',
      input: [{ id: 'in', address: 'testsrc2=size=64x64:rate=5', options: ['-re', '-f', 'lavfi'], cleanup: [] }],
      output: [{
        id: 'out', address: '{memfs}/{processid}.m3u8', options: ['-c:v', 'libx264', '-f', 'hls', '-method', 'PUT'],
        cleanup: [{ pattern: 'memfs:/{processid}_*.ts', max_files: 5, max_file_age_seconds: 0, purge_on_delete: true }],
      }],
      options: ['-loglevel', 'info'], reconnect: true, reconnect_delay_seconds: 5, autostart: false, stale_timeout_seconds: 30,
      limit_cpu_usage: 0, limit_memory_bytes: 0, limit_waitfor_seconds: 0,
    },
  };
}

async function main(): Promise<void> {
  const [dir, countArg] = process.argv.slice(2);
  if (!dir) throw new Error('usage: server.ts <dir> [stored processes]');
  const count = Number(countArg ?? 0);
  await mkdir(join(dir, 'disk'), { recursive: true });
  await mkdir(join(dir, 'db'), { recursive: true });
  const configPath = join(dir, 'config.json');
  await writeFile(configPath, JSON.stringify({
    address: '127.0.0.1:0', update_check: false, db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } },
  }));
  if (count > 0) {
    const process: Record<string, unknown> = {};
    const meta: Record<string, unknown> = {};
    for (let i = 0; i < count; i++) {
      const p = storedProcess(i);
      process[p.id] = p;
      meta[p.id] = i % 2 ? { 'restreamer-ui': { name: `channel ${i}`, meta: { title: 'x'.repeat(200) } } } : null;
    }
    await writeFile(join(dir, 'db', 'db.json'), JSON.stringify({ version: 4, process, metadata: { system: {}, process: meta } }));
  }
  const env = Object.fromEntries(Object.entries(globalThis.process.env).filter(([k]) => !k.startsWith('CORE_')));
  const t0 = performance.now();
  const core = await CoreService.start({ configPath, env });
  const startupMs = performance.now() - t0;
  globalThis.process.send?.({ url: core.url, startupMs });
  globalThis.process.on('message', (m) => {
    if (m === 'stop') void core.close().then(() => globalThis.process.exit(0));
  });
}

if (globalThis.process.argv[1]?.endsWith('server.ts')) await main();
