import '../../app/install.ts'; // this service's built-ins, installed into the core
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreService } from '../../core/service.ts';
import { filesystemsRef, type FilesystemService } from '../../sdk/index.ts';

/**
 * The service of `hls-s3-vs-memfs.ts`, in its own process so that its CPU and RSS can be read from
 * /proc apart from the driver's, the ffmpegs' (its children: utime and stime exclude them) and the
 * S3 server's: disk-fs, memfs (public writes without credentials), s3-fs with the one `storage.s3`
 * entry given as JSON, log level error, `http.threads: 0`.
 *
 *   node bench/s3/service.ts <dir> <storage.s3 entry as JSON>
 *
 * Sends `{ url }` once listening; answers `buffer` with the S3 filesystem's upload buffer at its
 * largest since the last `buffer` (`{ bytes, files, healthy }`, looked at every 50 ms; healthy = S3
 * healthy at every look); `stop` closes the service and exits.
 */

export interface BufferState { bytes: number; files: number; healthy: boolean }

type WithPending = FilesystemService & { pending?: BufferState };

async function main(): Promise<void> {
  const [dir, entryJson] = process.argv.slice(2);
  if (!dir || !entryJson) throw new Error('usage: service.ts <dir> <storage.s3 entry JSON>');
  const entry = JSON.parse(entryJson) as { name: string };
  await mkdir(join(dir, 'disk'), { recursive: true });
  const configPath = join(dir, 'config.json');
  await writeFile(configPath, JSON.stringify({
    address: '127.0.0.1:0', update_check: false, log: { level: 'error' }, http: { threads: 0 },
    plugins: ['disk-fs', 'memfs', 's3-fs'], db: { dir: join(dir, 'db') },
    storage: { disk: { dir: join(dir, 'disk') }, memory: { auth: { enable: false } }, s3: [entry] },
  }));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CORE_')));
  const core = await CoreService.start({ configPath, env });
  const list = core.app.kernel.services.resolve(filesystemsRef) as WithPending[];
  const s3 = list.find((f) => f.name === entry.name);
  // the largest buffer since the last question, looked at every 50 ms (an upload while S3 is healthy takes ms)
  const max: BufferState = { bytes: 0, files: 0, healthy: true };
  const watch = setInterval(() => {
    const p = s3?.pending;
    max.bytes = Math.max(max.bytes, p?.bytes ?? -1);
    max.files = Math.max(max.files, p?.files ?? -1);
    max.healthy &&= p?.healthy ?? false;
  }, 50);
  process.send!({ url: core.url });
  process.on('message', (m) => {
    if (m === 'buffer') {
      process.send!({ ...max });
      Object.assign(max, { bytes: 0, files: 0, healthy: true });
    }
    if (m === 'stop') { clearInterval(watch); void core.close().then(() => process.exit(0)); }
  });
}

if (process.argv[1]?.endsWith('service.ts')) await main();
