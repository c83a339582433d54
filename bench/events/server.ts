import '../../app/install.ts'; // this service's built-ins, installed into the core
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreService } from '../../core/service.ts';
import { eventsRef, type EventsService } from '../../sdk/index.ts';

/**
 * The fan-out benchmark's server: the real service (default plugins) in its own process, so its
 * CPU can be read from /proc apart from the clients'. The encoder binary is `/bin/false`: every
 * run fails at once and `reconnect` starts it again, so processes change state without ffmpeg.
 * With `emit <per second>` it also emits `process.state` events for 100 synthetic processes through
 * the events service itself, at that rate (the engine's spawn cost left out).
 *
 *   node bench/events/server.ts <dir> [emit <per second>]
 *
 * Sends `{ url }` to the parent once listening; `stop` closes it.
 */
async function main(): Promise<void> {
  const [dir, mode, rateArg] = process.argv.slice(2);
  if (!dir) throw new Error('usage: server.ts <dir>');
  await mkdir(join(dir, 'disk'), { recursive: true });
  const configPath = join(dir, 'config.json');
  await writeFile(configPath, JSON.stringify({
    address: '127.0.0.1:0', update_check: false, db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } },
    encoder: { binary: '/bin/false' }, log: { level: 'warn' }, events: { history: 10_000 },
  }));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CORE_')));
  const core = await CoreService.start({ configPath, env });
  let timer: NodeJS.Timeout | undefined;
  if (mode === 'emit') {
    const bus = core.app.kernel.services.resolve(eventsRef) as EventsService;
    const perTick = Number(rateArg ?? 300) / 100;
    const to = ['starting', 'running', 'failed'] as const;
    let n = 0;
    let due = 0;
    timer = setInterval(() => {
      for (due += perTick; due >= 1; due--, n++) {
        const id = `p${n % 100}`;
        bus.emit('process.state', { process: id, reference: '' }, {
          from: to[(n + 2) % 3], to: to[n % 3], reason: n % 3 === 2 ? 'exit status 1' : undefined, last_logline: 'synthetic',
        });
      }
    }, 10);
  }
  process.send?.({ url: core.url });
  process.on('message', (m) => {
    if (m === 'stop') {
      clearInterval(timer);
      void core.close().then(() => process.exit(0));
    }
  });
}

await main();
