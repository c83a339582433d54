import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { fresh, threadsConfig } from './threads/helpers.ts';

// a vendor filesystem with no HTTP and no thread code of its own (test/core/fixtures/vendor-fs-plugin.ts)
const fixture = new URL('../fixtures/vendor-fs-plugin.ts', import.meta.url).pathname;

t.test('a vendor filesystem with a change feed is served by the serving threads with no code of its own', async (t) => {
  const app = await startApp(t, { config: { ...threadsConfig(2), plugins: ['*', fixture] } });
  const body = Buffer.from('a vendor file\n');
  t.equal((await fresh(`${app.url}/vfs/a/b.bin`, { method: 'PUT', body })).status, 201, 'stored through the door');
  t.equal((await app.request('GET', '/api/v3/fs/vfs/a/b.bin')).text, body.toString(), 'the store has it');
  const before = await app.service.threads.stats();
  const wrong: string[] = [];
  await waitFor(async () => {
    for (let n = 0; n < 6; n++) {
      const r = await fresh(`${app.url}/vfs/a/b.bin`);
      if (r.status !== 200 || !r.body.equals(body) || r.headers['content-type'] !== 'application/octet-stream') wrong.push(`${r.status} ${r.headers['content-type']}`);
    }
    const now = await app.service.threads.stats();
    return now.length === 2 && now.every((s, i) => s.served > before[i]!.served);
  }, { timeout: 30_000, what: 'both threads answering /vfs/a/b.bin themselves' });
  t.same(wrong, [], 'the same answer on every listener');
  // a write through any listener reaches every copy before its answer: read back at once, anywhere
  for (let n = 0; n < 10; n++) {
    const next = Buffer.from(`version ${n}`);
    t.equal((await fresh(`${app.url}/vfs/a/b.bin`, { method: 'PUT', body: next })).status, 204);
    t.same((await fresh(`${app.url}/vfs/a/b.bin`)).body.toString(), next.toString(), `version ${n} everywhere`);
  }
  const refused = await fresh(`${app.url}/vfs/big.bin`, { method: 'PUT', body: Buffer.alloc(1_000_001) });
  t.equal(refused.status, 507, 'the store\'s own refusal, whichever listener took the upload');
  t.equal((await fresh(`${app.url}/vfs/a/b.bin`, { method: 'DELETE' })).status, 200);
  t.equal((await fresh(`${app.url}/vfs/a/b.bin`)).status, 404, 'deleted everywhere');
});
