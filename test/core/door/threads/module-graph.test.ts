import t, { type Test } from 'tap';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCli } from '../../../helpers/cli.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { fresh } from './helpers.ts';

/*
 * What a serving thread holds (issue 29): the service as its own process with one thread,
 * sessions on (its door tap runs in the thread), disk-fs (its reader too) and llhls (its view), and a preload
 * (fixtures/record-modules.ts) reporting from every worker thread its limits, each module it
 * loads and each collection it asked for.
 */

const MIB = 1024 * 1024;

const HEAVY = [
  /\/node_modules\/(fastify|@fastify|pino|pino-\w+|@sinclair\/typebox|awilix|mercurius|graphql|prom-client|ajv|jose|node-media-server|nats)\//,
  /\/sdk\/index\.ts$/, /\/core\/(app|service|main)\.ts$/, /\/core\/kernel\//, /\/core\/config\//,
];

async function start(t: Test): Promise<{ url: string; list(): Promise<string[]> }> {
  const work = await mkdtemp(join(tmpdir(), 'core-modules-'));
  t.teardown(() => rm(work, { recursive: true, force: true }));
  const out = join(work, 'modules.txt');
  const app = await startCli(t, {
    http: { threads: 1 }, sessions: { enable: true, ip_ignorelist: [] }, storage: { memory: { auth: { enable: false } } }, llhls: { enable: true },
  }, { env: { NODE_OPTIONS: `--import=${new URL('./fixtures/record-modules.ts', import.meta.url).href}`, CORE_TEST_MODULES_OUT: out } });
  const list = async () => (await readFile(out, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((l) => l.slice(l.indexOf(' ') + 1));
  return { url: app.url, list };
}

t.test('a serving thread loads the door and its taps, not fastify, pino, typebox or the SDK index; a small young generation', async (t) => {
  const app = await start(t);
  const list = app.list;
  // the door module and its tap modules load after the thread listens
  await waitFor(async () => (await list()).some((u) => u.endsWith('/plugins/sessions/hls.ts')), { what: 'the sessions tap loaded in the thread', timeout: 60_000 });
  t.equal((await fresh(`${app.url}/memfs/a.m3u8`, { method: 'PUT', body: '#EXTM3U\n#EXTINF:2,\na.ts\n' })).status, 201);
  t.equal((await fresh(`${app.url}/memfs/a.ts`, { method: 'PUT', body: Buffer.alloc(4096, 1) })).status, 201);
  for (const path of ['/memfs/a.m3u8', '/memfs/a.ts', '/memfs/none.ts', '/api/v3/config']) await fresh(`${app.url}${path}`);
  const loaded = await list();
  for (const own of ['/core/door/threads/worker.ts', '/core/door/thread-door.ts', '/core/door/threads/shared-release.ts', '/plugins/sessions/hls.ts', '/plugins/llhls/view.ts']) {
    t.ok(loaded.some((u) => u.endsWith(own)), `the thread loaded ${own}`);
  }
  t.same(loaded.filter((u) => HEAVY.some((re) => re.test(u))), [], 'nothing of main\'s frameworks in the thread');
  const limits = loaded.find((l) => l.startsWith('limits '));
  t.equal((JSON.parse(limits!.slice('limits '.length)) as { maxYoungGenerationSizeMb: number }).maxYoungGenerationSizeMb, 4, 'the thread\'s young generation is bounded');
});

t.test('files deleted and replaced in memfs: the thread collects their shared bodies once 16 MiB were dropped', async (t) => {
  const app = await start(t);
  await waitFor(async () => (await app.list()).some((u) => u.endsWith('/core/door/thread-door.ts')), { what: 'the door loaded in the thread', timeout: 60_000 });
  const body = Buffer.alloc(MIB, 0x47);
  for (let i = 0; i < 10; i++) t.equal((await fresh(`${app.url}/memfs/live/s${i}.ts`, { method: 'PUT', body })).status, 201);
  // replaced (a new body each) and deleted: 20 MiB the thread's copy let go of
  for (let i = 0; i < 10; i++) t.equal((await fresh(`${app.url}/memfs/live/s${i}.ts`, { method: 'PUT', body })).status, 204);
  for (let i = 0; i < 10; i++) t.equal((await fresh(`${app.url}/memfs/live/s${i}.ts`, { method: 'DELETE' })).status, 200);
  await waitFor(async () => (await app.list()).includes('gc-forced'), { what: 'a collection in the thread', timeout: 30_000 });
});
