import t from 'tap';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { startApp } from '../../helpers/app.ts';
import { startCli } from '../../helpers/cli.ts';
import { addProcess, nullProcess } from './helpers.ts';

/*
 * `db.max_metadata_mbytes` (issue 27.3): process and global metadata together, as db.json stores
 * them. Before: 20 global values of 3.5 MB made a 73.5 MB db.json and an 831 MB peak.
 */

const MB = 1024 * 1024;
const value = (n: number) => JSON.stringify('v'.repeat(n));

t.test('20 global values of 3.5 MB: refused with 413 beyond the default 16 MiB, db.json and RSS bounded', async (t) => {
  const app = await startCli(t);
  const put = async (key: string, body: string) => {
    const r = await fetch(`${app.url}/api/v3/metadata/${key}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body });
    return { status: r.status, body: await r.json() as { code: number; message: string; details: string[] } };
  };
  // warm-up with bodies of the same size, stored and refused (a process that does not exist):
  // code compiled and the heap sized for 3.5 MB bodies, so what follows measures what the
  // metadata makes the service hold, not the garbage collector's headroom for large bodies
  for (let i = 0; i < 3; i++) t.equal((await put('warm', value(3.5 * MB))).status, 200, 'warm-up');
  t.equal((await put('warm', 'null')).status, 200, 'warm-up removed');
  for (let i = 0; i < 16; i++) {
    const r = await fetch(`${app.url}/api/v3/process/none/metadata/k`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: value(3.5 * MB) });
    await r.arrayBuffer();
    if (r.status !== 404) t.fail(`warm-up refusal ${r.status}`);
  }
  const before = app.memory().rss;
  const statuses: number[] = [];
  let refusal: unknown;
  for (let i = 0; i < 20; i++) {
    const r = await put(`k${i}`, value(3.5 * MB));
    statuses.push(r.status);
    if (r.status === 413) refusal ??= r.body;
  }
  t.same(statuses, [...Array(4).fill(200), ...Array(16).fill(413)], 'four fit in 16 MiB, the others are refused');
  t.match(refusal, { code: 413, message: 'Payload Too Large', details: [/db\.max_metadata_mbytes allows 16777216/] });
  const db = statSync(join(app.dir, 'db', 'db.json')).size;
  t.ok(db < 16 * MB + 64 * 1024, `db.json stays under the limit (${(db / MB).toFixed(1)} MiB)`);
  const peak = app.memory().peak;
  t.ok(peak - before < 100 * MB, `peak RSS within 100 MB of before (+${Math.round((peak - before) / MB)} MB)`);
  t.equal((await put('k0', 'null')).status, 200, 'deleting is always allowed');
  t.equal((await put('k99', value(3.5 * MB))).status, 200, 'and makes room again');
});

t.test('process metadata counts toward the same total; shrinking always passes', async (t) => {
  const app = await startApp(t, { config: { db: { max_metadata_mbytes: 1 } } });
  await addProcess(app, nullProcess('p'));
  const big = { raw: value(400 * 1024), headers: { 'content-type': 'application/json' } };
  t.equal((await app.request('PUT', '/api/v3/metadata/g', big)).status, 200, 'global 400 KiB');
  t.equal((await app.request('PUT', '/api/v3/process/p/metadata/a', big)).status, 200, 'process 400 KiB');
  const over = await app.request('PUT', '/api/v3/process/p/metadata/b', big);
  t.equal(over.status, 413, 'a third 400 KiB passes the 1 MiB total');
  t.equal(over.body.message, 'Payload Too Large');
  t.equal((await app.request('PUT', '/api/v3/metadata/g2', big)).status, 413, 'global too');
  t.same((await app.request('GET', '/api/v3/process/p/metadata')).body, { a: 'v'.repeat(400 * 1024) }, 'nothing of the refused change applied');
  const smaller = { raw: value(100 * 1024), headers: { 'content-type': 'application/json' } };
  t.equal((await app.request('PUT', '/api/v3/process/p/metadata/a', smaller)).status, 200, 'replacing with a smaller value passes');
  t.equal((await app.request('DELETE', '/api/v3/process/p')).status, 200);
  t.equal((await app.request('PUT', '/api/v3/metadata/g2', big)).status, 200, 'a deleted process gives its metadata back');
});
