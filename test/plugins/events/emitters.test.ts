import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { SseClient } from './sse-client.ts';

const KB = (n: number) => Buffer.alloc(n * 1024, 7);

t.test('memfs: fs.full once per run of 507s, fs.purge with what was dropped', async (t) => {
  const app = await startApp(t, { config: { storage: { memory: { max_size_mbytes: 1, purge: false } } } });
  const c = await SseClient.open(`${app.url}/api/v3/events?types=fs.*`);
  t.teardown(() => c.close());
  const put = async (path: string, n: number) => (await app.request('PUT', `/api/v3/fs/mem/${path}`, { raw: KB(n) })).status;
  t.equal(await put('a.bin', 600), 201);
  t.equal(await put('b.bin', 600), 507);
  t.equal(await put('c.bin', 600), 507);
  const full = await c.next((e) => e.type === 'fs.full', 'fs.full');
  t.same(full.subject, { filesystem: 'mem', path: '/b.bin' });
  t.equal(full.payload.code, 'MEMFS_FULL');
  t.equal((await app.request('DELETE', '/api/v3/fs/mem/a.bin')).status, 200);
  t.equal(await put('d.bin', 600), 201);
  t.equal(await put('e.bin', 600), 507);
  await c.next((e) => e.type === 'fs.full' && e.subject.path === '/e.bin', 'fs.full again after a successful write');
  t.equal(c.events.filter((e) => e.type === 'fs.full').length, 2, 'not one per refusal');
});

t.test('memfs with purge: fs.purge; disk-fs: fs.full with its code', async (t) => {
  const app = await startApp(t, { config: { storage: { memory: { max_size_mbytes: 1, purge: true }, disk: { max_size_mbytes: 1 } } } });
  const c = await SseClient.open(`${app.url}/api/v3/events?types=fs.*`);
  t.teardown(() => c.close());
  t.equal((await app.request('PUT', '/api/v3/fs/mem/a.bin', { raw: KB(600) })).status, 201);
  t.equal((await app.request('PUT', '/api/v3/fs/mem/b.bin', { raw: KB(600) })).status, 201);
  const purge = await c.next((e) => e.type === 'fs.purge', 'fs.purge');
  t.same(purge.subject, { filesystem: 'mem', path: '/b.bin' });
  t.same(purge.payload, { files: 1, bytes: 600 * 1024 });
  t.equal((await app.request('PUT', '/api/v3/fs/disk/big.bin', { raw: KB(1100) })).status, 507);
  const full = await c.next((e) => e.type === 'fs.full', 'disk fs.full');
  t.same(full.subject, { filesystem: 'disk', path: '/big.bin' });
  t.equal(full.payload.code, 'DISKFS_FILE_TOO_BIG');
});

t.test('sessions: session.limit when the hls collector starts refusing', async (t) => {
  const app = await startApp(t, { config: { sessions: { ip_ignorelist: [], max_sessions: 1 } } });
  const c = await SseClient.open(`${app.url}/api/v3/events?types=session.*`);
  t.teardown(() => c.close());
  const playlist = '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\nseg0.ts\n';
  t.equal((await app.request('PUT', '/api/v3/fs/mem/live.m3u8', { raw: playlist })).status, 201);
  const master = await (await fetch(`${app.url}/memfs/live.m3u8`)).text();
  const session = /session=([^&\s]+)/.exec(master)![1];
  t.equal((await fetch(`${app.url}/memfs/live.m3u8?session=${session}`)).status, 200, 'the first viewer');
  t.equal((await fetch(`${app.url}/memfs/live.m3u8`)).status, 509, 'the second is refused');
  t.equal((await fetch(`${app.url}/memfs/live.m3u8`)).status, 509);
  const limit = await c.next((e) => e.type === 'session.limit', 'session.limit');
  t.same(limit.subject, { collector: 'hls' });
  t.equal(limit.payload.reason, 'Number of sessions exceeded');
  t.equal(c.events.length, 1, 'once for the run of refusals');
});
