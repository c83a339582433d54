import t from 'tap';
import { mkdtemp, rm, writeFile, readdir, readFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonDocument } from '../../../core/store/json-document.ts';
import { dbHandle } from '../../../core/process/db-document.ts';

/** db.json as the process engine opens it, with its `storable` check and the rendered text. */
async function openDb(dir: string) {
  await mkdir(dir, { recursive: true });
  const h = dbHandle();
  const doc = await JsonDocument.open(join(dir, 'db.json'), h.options);
  return Object.assign(doc, { storable: h.storable, render: () => Buffer.concat(h.options.format!(doc.data) as Buffer[]).toString() });
}
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';

async function tempDir(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'db-adv-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

t.test('a value db.json cannot hold is refused before it is applied', async (t) => {
  const db = await openDb(await tempDir(t));
  let deep: unknown[] = [];
  for (let i = 0; i < 200_000; i++) deep = [deep];
  t.throws(() => db.storable(deep), { status: 400 } as unknown as Error);
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  t.throws(() => db.storable(cyclic), { status: 400 } as unknown as Error);
  db.data.metadata.system.ok = 1;
  await db.save();
  t.same(JSON.parse(await readFile(db.path, 'utf8')).metadata.system, { ok: 1 });
});

t.test('a change whose write fails is undone', async (t) => {
  const dir = await tempDir(t);
  const sub = join(dir, 'db');
  const db = await openDb(sub);
  await db.commit(() => { db.data.metadata.system.kept = 1; });
  // the folder becomes a file: every write fails from now on
  await rm(sub, { recursive: true });
  await writeFile(sub, 'not a folder');
  await t.rejects(db.commit(() => {
    db.data.metadata.system.lost = 2;
    return () => { delete db.data.metadata.system.lost; };
  }));
  t.same({ ...db.data.metadata.system }, { kept: 1 }, 'memory matches the last write');
});

t.test('commits coalesced into a failing write are all undone, newest first', async (t) => {
  const dir = await tempDir(t);
  const sub = join(dir, 'db');
  const db = await openDb(sub);
  await db.commit(() => { db.data.metadata.system.k = 0; });
  await rm(sub, { recursive: true });
  await writeFile(sub, 'not a folder');
  const set = (v: number) => db.commit(() => {
    const before = db.data.metadata.system.k;
    db.data.metadata.system.k = v;
    return () => { db.data.metadata.system.k = before; };
  });
  // the first write is in flight when the second change is made on top of the first
  const results = await Promise.allSettled([set(1), set(2)]);
  t.same(results.map((r) => r.status), ['rejected', 'rejected']);
  t.same({ ...db.data.metadata.system }, { k: 0 }, 'the value last written');
  // writes work again once the folder is back
  await rm(sub);
  await mkdir(sub);
  await set(3);
  t.same(JSON.parse(await readFile(db.path, 'utf8')).metadata.system, { k: 3 });
});

t.test('the file layout is JSON.stringify(data, null, 4) and fragments follow replacements', async (t) => {
  const db = await openDb(await tempDir(t));
  const sp = { id: 'a', reference: '', created_at: 1, updated_at: 2, order: 'stop' as const, config: { id: 'a', input: [{ id: 'in', options: ['-f', 'x'] }] } };
  db.data.process.a = sp;
  db.data.metadata.process.a = null;
  db.data.metadata.system.ui = { n: [1, { m: 'x\ny' }] };
  const plain = () => JSON.stringify(JSON.parse(JSON.stringify(db.data)), null, 4) + '\n';
  t.equal(db.render(), plain());
  db.data.process.a = { ...sp, order: 'start' };
  t.equal(db.render(), plain(), 'a replaced entry is rendered anew');
  await db.save();
  t.equal(await readFile(db.path, 'utf8'), plain());
});

t.test('the layout holds through additions, removals and replacements of many entries', async (t) => {
  const db = await openDb(await tempDir(t));
  const plain = () => JSON.stringify(JSON.parse(JSON.stringify(db.data)), null, 4) + '\n';
  const sp = (id: string, n: number) => ({ id, reference: `r${n}`, created_at: n, updated_at: n, order: 'stop' as const, config: { id, n } });
  for (let i = 0; i < 600; i++) {
    db.data.process[`p${i}`] = sp(`p${i}`, i);
    db.data.metadata.process[`p${i}`] = i % 3 ? null : { ui: { i } };
  }
  t.equal(db.render(), plain(), 'first render');
  // a deterministic mix of changes, each followed by a render that reuses most blocks
  let seed = 7;
  const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  let ok = true;
  for (let round = 0; round < 120 && ok; round++) {
    // mostly replaced values (the blocks holding them are rebuilt), sometimes added or removed keys
    for (let n = rnd(3) + 1; n > 0; n--) {
      const id = `p${rnd(round < 60 ? 600 : 700)}`;
      switch (rnd(round < 60 ? 3 : 5)) {
        case 0: if (id in db.data.process) db.data.process[id] = sp(id, round); break;
        case 1: if (id in db.data.metadata.process) db.data.metadata.process[id] = round % 2 ? null : { ui: { round } }; break;
        case 2: if (`k${n}` in db.data.metadata.system) db.data.metadata.system[`k${n}`] = { round }; else db.data.metadata.system[`k${n}`] = round; break;
        case 3: delete db.data.process[id]; delete db.data.metadata.process[id]; break;
        default: db.data.process[id] = sp(id, round); db.data.metadata.process[id] ??= null;
      }
    }
    ok = db.render() === plain();
  }
  t.ok(ok, 'every render equals JSON.stringify(data, null, 4)');
  for (const id of Object.keys(db.data.process)) delete db.data.process[id];
  t.equal(db.render(), plain(), 'emptied');
});

t.test('dictionaries loaded from db.json have no prototype', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'db.json'), JSON.stringify({ version: 4, process: {}, metadata: { system: { __proto__: 1 }, process: { p: { a: 1 } } } }));
  const db = await openDb(dir);
  t.equal(db.data.metadata.system.toString, undefined);
  t.equal(Object.getPrototypeOf(db.data.metadata.process.p), null);
});

t.test('temp files of a killed writer are removed at start, a live writer\'s are kept', async (t) => {
  const app0 = await startApp(t, { config: { plugins: [] } });
  const dir = app0.dir;
  await app0.service.close();
  const db = join(dir, 'db');
  await mkdir(db, { recursive: true });
  const dead = 2 ** 22 + 12345; // above the default pid_max of small systems: not alive
  await writeFile(join(db, `.db.json.${dead}.abcdef012345.tmp`), '{');
  await writeFile(join(dir, `.config.json.${dead}.abcdef012345.tmp`), '{');
  await writeFile(join(db, `.db.json.1.abcdef012345.tmp`), '{'); // pid 1 is alive
  const app = await startApp(t, { dir });
  t.equal((await app.request('GET', '/api/v3/metadata')).status, 200);
  // the service's own writes use temp files too: wait until none of them is in flight
  const temps = async () => (await readdir(db)).filter((n) => n.endsWith('.tmp') && !n.includes(`.${process.pid}.`));
  await waitFor(async () => (await temps()).length === 1, { what: 'stale temp removed' });
  t.same(await temps(), ['.db.json.1.abcdef012345.tmp']);
  t.same((await readdir(dir)).filter((n) => n.endsWith('.tmp')), []);
});

t.test('a config file inside the served disk folder is refused at start', async (t) => {
  const dir = await tempDir(t);
  const disk = join(dir, 'disk');
  await mkdir(disk);
  const configPath = join(disk, 'config.json');
  await writeFile(configPath, JSON.stringify({ address: '127.0.0.1:0', db: { dir: join(dir, 'db') }, storage: { disk: { dir: disk } }, plugins: ['disk-fs'] }));
  await t.rejects(startApp(t, { dir: disk }), /served publicly/);
});
