import t from 'tap';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import type { FilesystemService } from '../../../sdk/index.ts';
import { CleanupRunner } from '../../../core/process/cleanup.ts';
import { startApp, type TestApp } from '../../helpers/app.ts';
import { usedAfterGc } from '../../helpers/memory.ts';
import { nullProcess } from './helpers.ts';

/*
 * Issue 46 point 5: a process's life leaves nothing behind. Before, every create/delete pair left
 * its `null` metadata line of db.json cached per key for good (db-text.ts), and that 40-byte
 * Buffer, cut from Node's shared 64 KiB pool, pinned the whole slab: about 32 KB a pair with a
 * 4 KB reference (the service went from 80 to 530 MB over 13,190 pairs). Memory is measured in
 * this process after full collections, so nothing here depends on timing.
 */

const KB = 1024;
const MB = 1024 * KB;
const REFERENCE = 'r'.repeat(4 * KB);

async function send(app: TestApp, method: string, path: string, body?: unknown): Promise<void> {
  const r = await fetch(`${app.url}${path}`, {
    method, headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status}`);
}

/** `n` calls of `f`, four at a time (as a client with a few connections does). */
async function each(n: number, f: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all([0, 1, 2, 3].map(async () => {
    for (let i = next++; i < n; i = next++) await f(i);
  }));
}

const pairs = (app: TestApp, from: number, n: number) => each(n, async (i) => {
  const id = `leak-${from + i}`;
  await send(app, 'POST', '/api/v3/process', nullProcess(id, { reference: REFERENCE }));
  await send(app, 'DELETE', `/api/v3/process/${id}`);
});

t.test('1,500 create/delete pairs leave no buffers behind', async (t) => {
  const app = await startApp(t);
  await pairs(app, 0, 100); // code compiled, validators and serializers built, pools sized
  const before = await usedAfterGc();
  await pairs(app, 100, 1500);
  const after = await usedAfterGc();
  const buffers = after.buffers - before.buffers;
  t.ok(buffers < 1 * MB, `ArrayBuffers +${(buffers / MB).toFixed(2)} MB (before the fix 25 MB)`);
  // the heap of this process also holds the test's HTTP client (its timings, weak references, code
  // tiering): a few MB of noise either way, so it is only shown; db-text.test.ts counts it alone
  t.comment(`heap ${((after.heap - before.heap) / MB).toFixed(2)} MB`);
});

t.test('live processes hold their bytes, not slabs of the shared Buffer pool', async (t) => {
  // db.json's text (blocks and lines) and each process's JSON as last sent (views.ts) are kept
  // while the process exists; cut from the pool, each kept a 64 KiB slab alive (here, before the
  // views' own bytes: 20 MB held for 8 MB; the service with 1,000 such processes: 81 MB against 31)
  const app = await startApp(t);
  await pairs(app, 0, 20);
  const before = await usedAfterGc();
  await each(300, (i) => send(app, 'POST', '/api/v3/process', nullProcess(`live-${i}`, { reference: REFERENCE })));
  await each(300, (i) => send(app, 'GET', `/api/v3/process/live-${i}`));
  const held = (await usedAfterGc()).buffers - before.buffers;
  const db = statSync(join(app.dir, 'db', 'db.json')).size;
  const view = Buffer.byteLength(await (await fetch(`${app.url}/api/v3/process/live-0`)).text());
  // db.json's text twice (its blocks, and the line of each entry they are made of) and one view each
  const meant = 2 * db + 300 * view;
  t.ok(held < 1.5 * meant, `ArrayBuffers held ${(held / MB).toFixed(1)} MB for ${(meant / MB).toFixed(1)} MB of cached bytes`);
});

t.test('the cleanup rules of deleted processes leave no compiled glob behind', async (t) => {
  // the cleanup tick compiled each rule's glob into a cache of the runner's own (16,384 kept,
  // about 3 KB each); now each rule keeps its matcher and it goes with the rule
  const files: FilesystemService = {
    name: 'mem', type: 'mem', mount: '/memfs',
    list: async () => [{ name: '/other.ts', size_bytes: 1, last_modified: 0 }],
    stat: async () => undefined, readFile: async () => undefined, writeFile: async () => ({ created: true }),
    deleteFile: async () => false, usage: () => ({ used: 0, limit: 0 }),
  };
  const runner = new CleanupRunner(() => [files], pino({ level: 'silent' }), 60_000);
  t.teardown(() => runner.stop());
  const life = async (i: number) => {
    runner.set(`p${i}`, [{ pattern: `mem:/p${i}_*.ts`, max_files: 6, max_file_age_seconds: 0, purge_on_delete: false }]);
    await runner.tick();
    await runner.unset(`p${i}`, false);
  };
  for (let i = 0; i < 100; i++) await life(i);
  const before = await usedAfterGc();
  for (let i = 100; i < 3100; i++) await life(i);
  const heap = (await usedAfterGc()).heap - before.heap;
  t.ok(heap < 1 * MB, `heap +${(heap / MB).toFixed(2)} MB (before the fix 9 MB)`);
});
