import '../../app/install.ts'; // this service's built-ins, installed into the core
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreService } from '../../core/service.ts';
import { placeholdersRef, type PlaceholderRegistry } from '../../sdk/index.ts';

/**
 * The SRT benchmark's server: the real service with SRT on 127.0.0.1:0, in its own process so its
 * CPU (all threads, libsrt's included) can be read from /proc. Sends `{ url, srtPort }` once
 * listening; `stop` closes it.
 *
 *   node bench/srt/server.ts <dir>
 */
async function main(): Promise<void> {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: server.ts <dir>');
  await mkdir(join(dir, 'disk'), { recursive: true });
  const configPath = join(dir, 'config.json');
  await writeFile(configPath, JSON.stringify({
    address: '127.0.0.1:0', update_check: false, log: { level: 'warn' },
    db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } },
    srt: { enable: true, address: '127.0.0.1:0' },
  }));
  const service = await CoreService.start({ configPath, env: {} });
  const ph = service.app.kernel.services.resolve(placeholdersRef) as PlaceholderRegistry;
  const srtPort = Number(/:(\d+)\?/.exec(ph.get('srt')!.value('input'))![1]);
  process.send!({ url: service.url, srtPort });
  process.on('message', async (m) => {
    if (m === 'stop') {
      await service.close();
      process.exit(0);
    }
  });
}

await main();
