import t from 'tap';
import { readFile } from 'node:fs/promises';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';

t.test('GET /api/v3/config shows the active config with its times and overrides', async (t) => {
  const app = await startApp(t, { config: { plugins: [] }, env: { PATH: process.env.PATH, CORE_NAME: 'env-name' } });
  const r = await app.request('GET', '/api/v3/config');
  t.equal(r.status, 200);
  t.equal(r.body.config.name, 'env-name');
  t.same(r.body.overrides, ['name']);
  for (const k of ['created_at', 'loaded_at', 'updated_at']) t.type(r.body[k], 'string');
  t.same(r.body.config.ffmpeg, r.body.config.encoder, 'both section names');
  t.equal(r.body.config.version, 3);
});

t.test('PUT /api/v3/config: partial merge, 400 for bad JSON and types, 409 for bad values', async (t) => {
  const app = await startApp(t, { config: { plugins: [], name: 'before' } });
  const before = await readFile(app.configPath, 'utf8');

  const bad = await app.request('PUT', '/api/v3/config', { raw: '{"name": ', headers: { 'content-type': 'application/json' } });
  t.equal(bad.status, 400);
  t.equal(bad.body.message, 'Invalid JSON');
  const types = await app.request('PUT', '/api/v3/config', { body: { log: { max_lines: 'many' }, api: { read_only: 3 } } });
  t.equal(types.status, 400);
  t.match(types.body.details.join(), /log\.max_lines/);
  t.match(types.body.details.join(), /api\.read_only/);
  const values = await app.request('PUT', '/api/v3/config', { body: { log: { level: 'loud' } } });
  t.equal(values.status, 409, 'an unknown log.level is an invalid value');
  t.same(values.body, { 'log.level': ["'loud' is not one of debug, info, warn, error, silent"] });
  const conflict = await app.request('PUT', '/api/v3/config', {
    body: { storage: { mimetypes_file: '/no/such/file' }, api: { access: { http: { block: ['1.2.3.4/99'] } } } },
  });
  t.equal(conflict.status, 409);
  t.same(conflict.body, { 'storage.mimetypes_file': ['/no/such/file does not exist'], 'api.access.http.block': ["'1.2.3.4/99' is not a valid CIDR"] });
  const version = await app.request('PUT', '/api/v3/config', { body: { version: 7 } });
  t.equal(version.status, 400);
  t.equal(version.body.message, 'Invalid config version');
  const aliases = await app.request('PUT', '/api/v3/config', { body: { encoder: { max_processes: 1 }, ffmpeg: { max_processes: 2 } } });
  t.equal(aliases.status, 409, 'both names changed differently');
  t.ok(aliases.body.encoder && aliases.body.ffmpeg);
  t.equal(await readFile(app.configPath, 'utf8'), before, 'nothing stored after the rejections');

  const ok = await app.request('PUT', '/api/v3/config', { body: { name: 'after', ffmpeg: { log: { max_lines: 77 } }, unknown_key: 1 } });
  t.equal(ok.status, 200);
  t.equal(ok.text, '"OK"', 'the JSON string OK');
  const stored = JSON.parse(await readFile(app.configPath, 'utf8'));
  t.equal(stored.name, 'after');
  t.equal(stored.encoder.log.max_lines, 77, 'the original name changes the interface name too');
  t.equal(stored.encoder.log.max_history, 3, 'partial: other keys kept');
  t.notOk('unknown_key' in stored, 'unknown keys are ignored');
  const view = await app.request('GET', '/api/v3/config');
  t.equal(view.body.config.name, 'after');
  t.equal((await app.request('GET', '/api')).body.name, 'before', 'applied only at reload');
});

t.test('reload rebuilds the app from the stored config on the same port', async (t) => {
  const app = await startApp(t, { config: { plugins: [], name: 'one' } });
  await app.request('PUT', '/api/v3/metadata/keep', { body: { v: 1 } });
  t.equal((await app.request('PUT', '/api/v3/config', { body: { name: 'two' } })).status, 200);
  const created = (await app.request('GET', '/api')).body.created_at;
  const r = await app.request('GET', '/api/v3/config/reload');
  t.equal(r.status, 200);
  t.equal(r.text, '"OK"');
  await waitFor(async () => (await app.request('GET', '/api').catch(() => undefined))?.body?.name === 'two', { what: 'reload' });
  t.same((await app.request('GET', '/api/v3/metadata/keep')).body, { v: 1 }, 'metadata kept');
  t.ok((await app.request('GET', '/api')).body.created_at >= created);
});
