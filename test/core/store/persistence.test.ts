import t from 'tap';
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startApp } from '../../helpers/app.ts';
import { JsonDocument } from '../../../core/store/json-document.ts';
import { dbHandle } from '../../../core/process/db-document.ts';
const dbDocument = dbHandle().options;

t.test('global metadata survives a restart even with no process', async (t) => {
  const first = await startApp(t, { config: { plugins: [] } });
  t.same((await first.request('GET', '/api/v3/metadata')).body, {});
  t.same((await first.request('PUT', '/api/v3/metadata/ui', { body: { theme: 'dark', n: [1, 2] } })).body, { theme: 'dark', n: [1, 2] });
  t.equal((await first.request('PUT', '/api/v3/metadata/gone', { body: 1 })).status, 200);
  t.equal((await first.request('PUT', '/api/v3/metadata/gone', { body: null })).status, 200, 'null deletes');
  t.equal((await first.request('GET', '/api/v3/metadata/gone')).status, 404);
  const db = JSON.parse(await readFile(join(first.dir, 'db', 'db.json'), 'utf8'));
  t.equal(db.version, 4);
  t.same(db.metadata.system, { ui: { theme: 'dark', n: [1, 2] } });
  await first.service.close();

  const second = await startApp(t, { dir: first.dir });
  t.same((await second.request('GET', '/api/v3/metadata/ui')).body, { theme: 'dark', n: [1, 2] });
  t.same((await second.request('GET', '/api/v3/metadata')).body, { ui: { theme: 'dark', n: [1, 2] } });
  const missing = await second.request('GET', '/api/v3/metadata/nope');
  t.same(missing.body, { code: 404, message: 'Metadata not found', details: ['unknown key'] });
  t.equal((await second.request('PUT', '/api/v3/metadata/', { body: 1 })).status, 400, 'empty key');
});

t.test('malformed and oversize bodies get 400 / 413 with the Error body and change nothing', async (t) => {
  const app = await startApp(t, { config: { plugins: [], api: { max_body_size_mbytes: 1 } } });
  await app.request('PUT', '/api/v3/metadata/x', { body: 'kept' });
  const cases: Array<[string, Record<string, string>, number]> = [
    ['{"a":', { 'content-type': 'application/json' }, 400],
    ['', { 'content-type': 'application/json' }, 400],
    ['[1,2', { 'content-type': 'application/json' }, 400],
    ['{"a":1}', { 'content-type': 'application/x-www-form-urlencoded' }, 400],
    [JSON.stringify({ big: 'x'.repeat(2 * 1024 * 1024) }), { 'content-type': 'application/json' }, 413],
  ];
  for (const [raw, headers, status] of cases) {
    const r = await app.request('PUT', '/api/v3/metadata/x', { raw, headers });
    t.equal(r.status, status, `${raw.slice(0, 10)} -> ${status}`);
    t.equal(r.body.code, status);
    t.type(r.body.message, 'string');
    t.ok(Array.isArray(r.body.details));
  }
  const kept = await app.request('GET', '/api/v3/metadata/x');
  t.equal(kept.text, '"kept"', 'a string value comes back as a JSON string');
  t.match(kept.headers.get('content-type'), /application\/json/);
  t.equal((await app.request('GET', '/ping')).text, 'pong', 'still serving');
});

t.test('an unknown db.json version stops the boot and the file is not overwritten', async (t) => {
  const dir = join(t.testdirName, 'db');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'db.json'), '{"version": 3, "process": {}}');
  await t.rejects(JsonDocument.open(join(dir, 'db.json'), dbDocument), /unsupported version .* \(want: 4, have: 3\)/);
  await writeFile(join(dir, 'db.json'), '{"version": 4, "proc');
  await t.rejects(JsonDocument.open(join(dir, 'db.json'), dbDocument), /not valid JSON/);
  t.equal(await readFile(join(dir, 'db.json'), 'utf8'), '{"version": 4, "proc');
});

t.test('concurrent saves are coalesced and all land', async (t) => {
  const dir = join(t.testdirName, 'db2');
  const db = await JsonDocument.open(join(dir, 'db.json'), dbDocument);
  const saves: Promise<void>[] = [];
  for (let i = 0; i < 50; i++) {
    db.data.metadata.system[`k${i}`] = i;
    saves.push(db.save());
  }
  await Promise.all(saves);
  const onDisk = JSON.parse(await readFile(join(dir, 'db.json'), 'utf8'));
  t.equal(Object.keys(onDisk.metadata.system).length, 50);
});
