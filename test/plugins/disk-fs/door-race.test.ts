import t, { type Test } from 'tap';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type TestApp } from '../../helpers/app.ts';
import { fresh, type Answer } from '../../core/door/threads/helpers.ts';
import { ONLY_SECRET, VICTIMS, buildSwapper, changes, raceFixture, runSwapper, snapshot, type RaceFixture } from './door-race-helpers.ts';

/*
 * Issue 43, point 2: anything that writes the disk root (a confined ffmpeg) can exchange a folder
 * of it with a link to a folder outside (renameat2 RENAME_EXCHANGE) between the service's check
 * of a path and its use. Here a swapper does that as fast as it can while anonymous reads
 * (GET, HEAD, ranges, folders, /ui), authenticated uploads (new files and rename over), deletes,
 * listings and API reads run, on main alone and with two serving threads: no answer may carry
 * a byte of the secrets, nothing may be written, replaced or removed outside the root.
 */

// what the issue asks for; every loop below runs until the swapper ends, nothing is timed
const SECONDS = 20;
const USER = 'admin';
const PASS = 'door-race-password';

interface Tally {
  requests: number;
  leaks: string[];
  statuses: Map<number, number>;
  errors: Set<string>;
}

/** One request on a fresh connection; a connection the server closed early counts as status 0. */
async function send(url: string, opts: Parameters<typeof fresh>[1], tally: Tally): Promise<Answer> {
  try {
    const r = await fresh(url, opts);
    count(tally, r.status);
    return r;
  } catch (err) {
    count(tally, 0);
    tally.errors.add((err as Error).message);
    return { status: 0, body: Buffer.alloc(0), headers: {} };
  }
}

const count = (tally: Tally, status: number) => {
  tally.requests++;
  tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
};

/** The anonymous reads: public mount, its folder index, a range, HEAD sizes, the /ui folder. */
function readers(app: TestApp, fx: RaceFixture, tally: Tally, running: () => boolean): Array<Promise<void>> {
  const configSize = fx.sizes.get('config.json');
  const read = async (path: string, opts: { method?: string; headers?: Record<string, string> } = {}) => {
    while (running()) {
      const r = await send(`${app.url}${path}`, opts, tally);
      if (r.body.includes(fx.marker)) tally.leaks.push(`${opts.method ?? 'GET'} ${path}: ${r.status} with the marker`);
      if (opts.method === 'HEAD' && r.status === 200 && Number(r.headers['content-length']) !== configSize) {
        tally.leaks.push(`HEAD ${path}: content-length ${r.headers['content-length']}, not the public file's ${configSize}`);
      }
    }
  };
  return [
    read('/race/config.json'),
    read('/race/config.json', { method: 'HEAD' }),
    read('/race/seg.ts', { headers: { range: 'bytes=0-99' } }),
    read('/race/'),
    read('/ui/race/config.json'),
  ];
}

/** The authenticated API: uploads (new files, rename over), deletes with re-uploads, listings, reads. */
function writers(app: TestApp, fx: RaceFixture, token: string, tally: Tally, running: () => boolean): Array<Promise<void>> {
  const auth = { authorization: `Bearer ${token}` };
  const api = `${app.url}/api/v3/fs/disk`;
  const call = async (path: string, method: string, body?: string) => {
    const r = await send(`${api}${path}`, { method, body, headers: body === undefined ? auth : { ...auth, 'content-type': 'application/data' } }, tally);
    if (r.body.includes(fx.marker)) tally.leaks.push(`${method} /api/v3/fs/disk${path}: ${r.status} with the marker`);
    return r;
  };
  const loop = async (step: (n: number) => Promise<void>) => {
    for (let n = 0; running(); n++) await step(n);
  };
  return [
    loop(async (n) => { await call(`/race/up-${n % 40}.txt`, 'PUT', `uploaded ${n}\n`); }),
    loop(async (n) => { await call('/race/replace.txt', 'PUT', `replaced ${n}\n`); }),
    loop(async (n) => {
      const name = VICTIMS[n % VICTIMS.length]!;
      await call(`/race/${name}`, 'DELETE');
      await call(`/race/${name}`, 'PUT', `public ${name}\n`.repeat(40));
    }),
    loop(async () => {
      const r = await call('?glob=/race/**', 'GET');
      if (r.status !== 200) return;
      for (const f of JSON.parse(r.body.toString()) as Array<{ name: string; size_bytes: number }>) {
        if (f.name.endsWith(ONLY_SECRET)) tally.leaks.push(`listing: shows ${f.name}`);
        // the public copies' sizes (the victims are uploaded again with the same bytes)
        const plain = fx.sizes.get(f.name.slice('/race/'.length));
        if (plain !== undefined && f.size_bytes !== plain) tally.leaks.push(`listing: ${f.name} has ${f.size_bytes} bytes, not ${plain}`);
      }
    }),
    loop(async () => { await call('/race/config.json', 'GET'); }),
  ];
}

async function raceMode(t: Test, bin: string, threads: number): Promise<void> {
  // the disk root is also the web UI's folder (router.ui_path): both are served from a root children write
  const work = await mkdtemp(join(tmpdir(), 'door-race-'));
  t.teardown(() => rm(work, { recursive: true, force: true }));
  const disk = join(work, 'disk');
  await mkdir(disk);
  const app = await startApp(t, {
    config: {
      http: { threads },
      sessions: { enable: false },
      api: { auth: { enable: true, username: USER, password: PASS } },
      // main: the HTTP cache in front of the disk; threads: cache off, so the threads read the disk
      storage: { disk: { dir: disk, cache: { enable: threads === 0 } } },
      router: { ui_path: disk },
    },
  });
  const fx = await raceFixture(disk, join(work, 'secrets'));
  const secretsBefore = await snapshot(fx.secrets);
  const configBefore = await readFile(app.configPath, 'utf8');
  const login = await app.request('POST', '/api/login', { body: { username: USER, password: PASS } });
  t.equal(login.status, 200, 'logged in');
  const token = (login.body as { access_token: string }).access_token;
  const dbBefore = await snapshot(join(app.dir, 'db'));

  const tally: Tally = { requests: 0, leaks: [], statuses: new Map(), errors: new Set() };
  const swapper = runSwapper(bin, disk, SECONDS);
  t.teardown(() => { swapper.child.kill('SIGKILL'); });
  let swapping = true;
  const swaps = swapper.done.finally(() => { swapping = false; });
  const running = () => swapping;
  const loops = [...readers(app, fx, tally, running), ...writers(app, fx, token, tally, running)];
  const exchanges = await swaps;
  await Promise.all(loops);

  t.ok(exchanges > 0, `the swapper exchanged the folders ${exchanges} times`);
  t.ok(tally.requests > 0, `${tally.requests} requests during the race (statuses ${JSON.stringify([...tally.statuses])}, errors ${JSON.stringify([...tally.errors])})`);
  if (threads > 0) {
    const stats = await app.service.threads.stats();
    t.ok(stats.some((s) => s.served > 0), `the threads answered reads themselves (${JSON.stringify(stats)})`);
  }
  const kinds = new Map<string, number>();
  for (const l of tally.leaks) kinds.set(l.replace(/:.*/, ''), (kinds.get(l.replace(/:.*/, '')) ?? 0) + 1);
  t.same(tally.leaks.slice(0, 20), [], `no answer carries the secrets (${tally.leaks.length} leaks: ${JSON.stringify([...kinds])})`);
  t.notOk(tally.statuses.has(500), 'no 500');
  const none = { added: { count: 0, first: [] }, changed: { count: 0, first: [] }, removed: { count: 0, first: [] } };
  t.same(changes(secretsBefore, await snapshot(fx.secrets)), none, 'nothing written, replaced or removed in the secrets');
  t.equal(await readFile(app.configPath, 'utf8'), configBefore, 'the config file is unchanged');
  t.same(changes(dbBefore, await snapshot(join(app.dir, 'db'))), none, 'db.dir is unchanged');
}

const binDir = await mkdtemp(join(tmpdir(), 'door-race-bin-'));
t.teardown(() => rm(binDir, { recursive: true, force: true }));
const built = await buildSwapper(binDir);
const skip = built.reason ?? false;
t.test('a folder exchanged with a link to secrets: main alone (http.threads 0)', { skip }, (t) => raceMode(t, built.bin!, 0));
t.test('a folder exchanged with a link to secrets: two serving threads (http.threads 2)', { skip }, (t) => raceMode(t, built.bin!, 2));
