import '../../app/install.ts'; // this service's built-ins, installed into the core
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreService } from '../../core/service.ts';

/**
 * The service of `ondemand.ts`, in its own process so that its CPU and RSS can be read from /proc
 * apart from the driver's and its ffmpeg children's (utime and stime exclude children): the default
 * plugins, log level error, `http.threads: 0`, disk at `<dir>/disk` (the looping source file is
 * put there by the driver).
 *
 *   node bench/process/ondemand-service.ts <dir>
 *
 * Sends `{ url }` once listening; `stop` closes the service and exits.
 */

async function main(): Promise<void> {
  const [dir] = process.argv.slice(2);
  if (!dir) throw new Error('usage: ondemand-service.ts <dir>');
  await mkdir(join(dir, 'disk'), { recursive: true });
  const configPath = join(dir, 'config.json');
  await writeFile(configPath, JSON.stringify({
    address: '127.0.0.1:0', update_check: false, log: { level: 'error' }, http: { threads: 0 },
    db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } },
  }));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CORE_')));
  const core = await CoreService.start({ configPath, env });
  process.send!({ url: core.url });
  process.on('message', (m) => {
    if (m === 'stop') void core.close().then(() => process.exit(0));
  });
}

if (process.argv[1]?.endsWith('ondemand-service.ts')) await main();
