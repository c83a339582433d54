import '../../app/install.ts'; // this service's built-ins, installed into the core
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { CoreService } from '../../core/service.ts';

/**
 * The benchmark's server side, run in a child process so that autocannon (in the parent) does
 * not share an event loop with what it measures: the real service (disk-fs + memfs, as
 * test/helpers/app.ts starts it) and a bare node:http server answering with the same Buffers.
 */

export const PLAYLIST = Buffer.from(`#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:1041\n${
  Array.from({ length: 6 }, (_, i) => `#EXTINF:2.000000,\nlive_${1041 + i}.ts\n`).join('')}`.padEnd(400, '#'));
export const SEGMENT = Buffer.alloc(1024 * 1024, 0x47);
/** An ffmpeg live playlist of 236 bytes (five 2 s segments): small-path.ts, small-path-js.ts. */
export const PLAYLIST_236 = Buffer.from(`#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:1041\n${
  Array.from({ length: 5 }, (_, i) => `#EXTINF:2.000000,\nlive_${1041 + i}.ts\n`).join('')}`.padEnd(236, '#'));

/**
 * In a forked server child: answers the parent's `rss` and `cpu` questions, and on `stop` closes
 * `core`, removes `dir` and exits.
 */
export function answerParent(core: CoreService, dir: string): void {
  process.on('message', async (m) => {
    if (m === 'rss') process.send!(process.memoryUsage().rss);
    if (m === 'cpu') { const u = process.cpuUsage(); process.send!(u.user + u.system); }
    if (m !== 'stop') return;
    await core.close();
    await rm(dir, { recursive: true, force: true });
    process.exit(0);
  });
}

export async function startCore(dir: string, extra: Record<string, unknown> = {}): Promise<CoreService> {
  await mkdir(join(dir, 'disk'), { recursive: true });
  const configPath = join(dir, 'config.json');
  await writeFile(configPath, JSON.stringify({
    address: '127.0.0.1:0', update_check: false, log: { level: 'error' }, plugins: ['disk-fs', 'memfs'],
    db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') }, memory: { auth: { enable: false } } },
    ...extra,
  }));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CORE_')));
  const core = await CoreService.start({ configPath, env });
  for (const [path, body] of [['/live/index.m3u8', PLAYLIST], ['/live/segment.ts', SEGMENT]] as const) {
    const r = await fetch(`${core.url}/memfs${path}`, { method: 'PUT', body });
    if (r.status !== 201) throw new Error(`PUT ${path}: ${r.status}`);
  }
  return core;
}

/** A bare node:http server sending the same bytes with the same headers as memfs does. */
function startBare(): Promise<Server> {
  const headers = (type: string, body: Buffer) => ({
    vary: 'Origin', 'content-type': type, 'last-modified': new Date().toUTCString(), 'accept-ranges': 'bytes',
    etag: `"${body.length.toString(16)}-${Date.now().toString(16)}-1"`, 'content-length': String(body.length),
  });
  const playlist = headers('application/vnd.apple.mpegurl', PLAYLIST);
  const segment = headers('video/MP2T', SEGMENT);
  const server = createServer((req, res) => {
    const isPlaylist = req.url!.endsWith('.m3u8');
    res.writeHead(200, isPlaylist ? playlist : segment);
    res.end(isPlaylist ? PLAYLIST : SEGMENT);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

export async function serve(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-memfs-'));
  const core = await startCore(dir);
  const bare = await startBare();
  process.send!({ core: core.url, bare: `http://127.0.0.1:${(bare.address() as AddressInfo).port}` });
  process.on('message', async (m) => {
    if (m !== 'stop') return;
    bare.close();
    await core.close();
    await rm(dir, { recursive: true, force: true });
    process.exit(0);
  });
}
