import t from 'tap';
import { placeholdersRef, filesystemsRef, type PlaceholderRegistry } from '../../../sdk/index.ts';
import { basic, startFs, MEM_PASS } from './fs-helpers.ts';
import { waitFor } from '../../helpers/wait.ts';

t.test('memfs files survive a config reload; the placeholders are registered again', async (t) => {
  const app = await startFs(t);
  await app.request('PUT', '/memfs/live/keep.m3u8', { raw: '#EXTM3U\n', headers: basic() });
  await app.request('PATCH', '/api/v3/fs/mem/live/alias.m3u8', { raw: '/live/keep.m3u8' });
  const before = app.service.app;

  t.equal((await app.request('GET', '/api/v3/config/reload')).status, 200);
  await waitFor(() => app.service.app !== before && app.service.app.kernel.plugins.includes('memfs'), { what: 'reload' });
  await waitFor(async () => (await app.request('GET', '/memfs/live/keep.m3u8')).status === 200, { what: 'serving again' });

  t.equal((await app.request('GET', '/memfs/live/keep.m3u8')).text, '#EXTM3U\n');
  const r = await app.request('GET', '/api/v3/fs/mem?sort=name');
  t.same(r.body.map((f: any) => f.name), ['/live/alias.m3u8', '/live/keep.m3u8'], 'links survive too');
  t.equal((await app.request('PUT', '/memfs/live/new.ts', { raw: 'x', headers: basic() })).status, 201);

  const k = app.service.app.kernel;
  const ph = k.services.resolve(placeholdersRef) as PlaceholderRegistry;
  const mem = ph.get('memfs')!;
  t.equal(ph.get('fs:mem'), mem, '{fs:mem} is an alias of {memfs}');
  t.same(mem.contexts, ['address', 'options']);
  t.equal(mem.value('output'), `http://127.0.0.1:${app.service.port}/memfs`, 'no credential in a command that does not run');
  t.equal(mem.value('output', { processId: 'a:b', token: 'T'.repeat(32) }), `http://process:a%3Ab:${'T'.repeat(32)}@127.0.0.1:${app.service.port}/memfs`,
    'a run\'s credential, never storage.memory.auth\'s password');
  const disk = ph.get('diskfs')!;
  t.equal(ph.get('fs:disk'), disk);
  t.same(disk.contexts, ['global', 'address', 'options']);
  const fss = k.services.resolve(filesystemsRef) as Array<{ name: string; root?: string }>;
  t.equal(disk.value('global'), fss.find((f) => f.name === 'disk')!.root);
  t.equal(disk.value('global'), `${app.dir}/disk`);
});

t.test('{memfs} has no credentials when memfs auth is off', async (t) => {
  const app = await startFs(t, { storage: { memory: { auth: { enable: false } } } });
  const ph = app.service.app.kernel.services.resolve(placeholdersRef) as PlaceholderRegistry;
  t.equal(ph.get('memfs')!.value('output', { processId: 'p', token: 'T'.repeat(32) }), `http://127.0.0.1:${app.service.port}/memfs`);
});

t.test('a reload with a smaller limit trims only when purge is on', async (t) => {
  const app = await startFs(t);
  for (const n of ['1', '2', '3']) await app.request('PUT', `/api/v3/fs/mem/${n}.ts`, { raw: Buffer.alloc(400 * 1024) });
  let r = await app.request('PUT', '/api/v3/config', { body: { storage: { memory: { max_size_mbytes: 1, purge: false } } } });
  t.equal(r.status, 200);
  let before = app.service.app;
  await app.request('GET', '/api/v3/config/reload');
  await waitFor(() => app.service.app !== before && app.service.app.kernel.plugins.includes('memfs'), { what: 'reload' });
  await waitFor(async () => (await app.request('GET', '/api/v3/fs/mem')).status === 200, { what: 'serving again' });
  t.equal((await app.request('GET', '/api/v3/fs/mem')).body.length, 3, 'without purge nothing is dropped');
  r = await app.request('PUT', '/api/v3/fs/mem/4.ts', { raw: 'x' });
  t.equal(r.status, 507, 'but writes are refused while over the limit');

  await app.request('PUT', '/api/v3/config', { body: { storage: { memory: { max_size_mbytes: 1, purge: true } } } });
  before = app.service.app;
  await app.request('GET', '/api/v3/config/reload');
  await waitFor(() => app.service.app !== before && app.service.app.kernel.plugins.includes('memfs'), { what: 'reload' });
  await waitFor(async () => (await app.request('GET', '/api/v3/fs/mem')).status === 200, { what: 'serving again' });
  r = await app.request('GET', '/api/v3/fs/mem?sort=name');
  t.same(r.body.map((f: any) => f.name), ['/2.ts', '/3.ts'], 'with purge the oldest go');
});
