import t from 'tap';
import { connect } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startApp } from '../../helpers/app.ts';
import { addProcess, nullProcess } from '../process/helpers.ts';

const bomb = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const JSON_CT = { 'content-type': 'application/json' };
const isError = (b: any, status: number) => b && b.code === status && typeof b.message === 'string' && Array.isArray(b.details);

t.test('a deeply nested body is refused with 400 and every later change is still saved', async (t) => {
  const app = await startApp(t, { config: { plugins: [] } });
  await addProcess(app, nullProcess('p1'));
  for (const path of ['/api/v3/metadata/x', '/api/v3/process/p1/metadata/k', '/api/v3/process/p1', '/api/v3/config']) {
    const r = await app.request('PUT', path, { raw: bomb(20_000), headers: JSON_CT });
    t.equal(r.status, 400, `${path}: 400`);
    t.ok(isError(r.body, 400), `${path}: Error body`);
  }
  t.equal((await app.request('PUT', '/api/v3/metadata/x', { raw: bomb(100), headers: JSON_CT })).status, 200, 'moderate nesting is fine');
  t.equal((await app.request('PUT', '/api/v3/metadata/y', { body: { ok: 1 } })).status, 200);
  t.equal((await app.request('PUT', '/api/v3/process/p1/metadata/k', { body: 'v' })).status, 200);
  t.equal((await app.request('GET', '/api/v3/metadata')).status, 200);
  const db = JSON.parse(await readFile(join(app.dir, 'db', 'db.json'), 'utf8'));
  t.same(db.metadata.system.y, { ok: 1 }, 'saved');
  t.same(db.metadata.process.p1, { k: 'v' }, 'saved');
  t.same(db.metadata.system.x, JSON.parse(bomb(100)));
});

t.test('prototype names are refused or plain keys, never fake hits', async (t) => {
  const app = await startApp(t, { config: { plugins: [] } });
  await addProcess(app, nullProcess('p1'));
  for (const k of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
    const g = await app.request('GET', `/api/v3/metadata/${k}`);
    t.equal(g.status, 404, `global ${k}: 404`);
    t.ok(isError(g.body, 404));
    t.equal((await app.request('GET', `/api/v3/process/p1/metadata/${k}`)).status, 404, `process ${k}: 404`);
    t.equal((await app.request('GET', `/api/v3/process/${k}`)).status, 404, `process id ${k}: 404`);
  }
  for (const k of ['__proto__', 'constructor', 'prototype']) {
    t.equal((await app.request('PUT', `/api/v3/metadata/${k}`, { body: 1 })).status, 400, `PUT global ${k}: 400`);
    t.equal((await app.request('PUT', `/api/v3/process/p1/metadata/${k}`, { body: 1 })).status, 400, `PUT process ${k}: 400`);
    const p = await app.request('POST', '/api/v3/process', { body: nullProcess(k) });
    t.equal(p.status, 400, `process id ${k}: 400`);
  }
  // other names of Object.prototype are ordinary keys: stored and kept across a restart
  t.equal((await app.request('PUT', '/api/v3/metadata/toString', { body: 'a' })).status, 200);
  t.equal((await app.request('PUT', '/api/v3/process/p1/metadata/valueOf', { body: 'b' })).status, 200);
  await addProcess(app, nullProcess('toString'));
  await app.service.close();
  const again = await startApp(t, { dir: app.dir });
  t.same((await again.request('GET', '/api/v3/metadata/toString')).body, 'a');
  t.same((await again.request('GET', '/api/v3/process/p1/metadata')).body, { valueOf: 'b' });
  t.equal((await again.request('GET', '/api/v3/process/toString')).status, 200);
});

t.test('ids and keys must be valid Unicode of a bounded length; restreamer-ui ids are fine', async (t) => {
  const app = await startApp(t, { config: { plugins: [] } });
  for (const id of ['\udfff', 'a\ud800', 'x'.repeat(257), 'a\u0000b', 'tab\there']) {
    const r = await app.request('POST', '/api/v3/process', { body: nullProcess(id) });
    t.equal(r.status, 400, `id ${JSON.stringify(id).slice(0, 20)}: 400`);
    t.ok(isError(r.body, 400));
  }
  t.equal((await app.request('GET', '/api/v3/process')).body.length, 0, 'nothing stored');
  const ui = 'restreamer-ui:ingest:4186b095-7f0a-4e94-8c3b-f7b12c6b6c5a';
  await addProcess(app, nullProcess(ui));
  await addProcess(app, nullProcess(`restreamer-ui:egress:youtube:${'a'.repeat(36)}`));
  t.equal((await app.request('PUT', `/api/v3/process/${encodeURIComponent(ui)}/metadata/restreamer-ui`, { body: { x: 1 } })).status, 200);
  t.equal((await app.request('PUT', '/api/v3/metadata/license', { body: 'CC' })).status, 200);
  t.equal((await app.request('PUT', `/api/v3/metadata/${'k'.repeat(257)}`, { body: 1 })).status, 400, 'long key');
});

t.test('malformed URLs and over-long names answer the Error body without server paths', async (t) => {
  const app = await startApp(t);
  for (const path of ['/api/v3/metadata/%zz', '/%zz', '/api/v3/process/%ED%BF%BF']) {
    const r = await app.request('GET', path);
    t.equal(r.status, 400, `${path}: 400`);
    t.ok(isError(r.body, 400), `${path}: Error body`);
  }
  const long = await app.request('GET', `/${'n'.repeat(300)}.ts`);
  t.equal(long.status, 404, 'a 300-character name is not found');
  t.notMatch(long.text, app.dir, 'no absolute path');
  const deep = await app.request('GET', `/${'d/'.repeat(2100)}f`);
  t.ok(deep.status === 404 || deep.status === 400, `very long path: ${deep.status}`);
  t.notMatch(deep.text, app.dir, 'no absolute path');
});

t.test('a client that never finishes its headers is disconnected (header timeout 10 s)', async (t) => {
  const app = await startApp(t);
  const { port } = new URL(app.url);
  const sock = connect(Number(port), '127.0.0.1');
  t.teardown(() => sock.destroy());
  await new Promise<void>((resolve) => sock.once('connect', resolve));
  sock.write('GET /api HTTP/1.1\r\nHost: x\r\n');
  const closed = new Promise<string>((resolve) => {
    sock.once('close', () => resolve('closed'));
    sock.on('data', () => {});
    sock.on('error', () => {});
  });
  // generous bound: the setting is 10 s, node checks every 2 s; the old default was ~90 s
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<string>((resolve) => { timer = setTimeout(() => resolve('still open'), 30_000); });
  const outcome = await Promise.race([closed, deadline]);
  clearTimeout(timer);
  t.equal(outcome, 'closed');
});
