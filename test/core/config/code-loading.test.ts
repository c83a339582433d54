import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { cleanEnv, startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';

/*
 * Issue 26: code runs only from what the operator wrote. A module uploaded through the API and
 * named in a config PUT is refused before anything imports it; a reload imports nothing new; a
 * module in a folder the API writes never loads, even from the config file.
 */

/** A valid plugin module whose import alone leaves a mark. */
function evilModule(mark: string): string {
  return `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(mark)}, 'ran');\n` +
    `export default { name: 'evil', setup() {} };\n`;
}

t.test('a config PUT cannot name code: refused with 400, nothing imported, nothing stored', async (t) => {
  const app = await startApp(t);
  const mark = join(app.dir, 'imported');
  const up = await app.request('PUT', '/api/v3/fs/disk/x.mjs', { raw: evilModule(mark), headers: { 'content-type': 'application/octet-stream' } });
  t.ok(up.status === 201 || up.status === 204, 'the module is uploaded');
  const module = join(app.dir, 'disk', 'x.mjs');
  const before = readFileSync(app.configPath, 'utf8');
  for (const [key, body] of [
    ['plugins', { plugins: ['*', module] }],
    ['plugins', { plugins: [{ module, config: {} }] }],
    ['encoder.binary', { encoder: { binary: '/bin/sh' } }],
    ['ffmpeg.binary', { ffmpeg: { binary: '/bin/sh' } }],
    ['encoder.confinement', { encoder: { confinement: { writable: ['/'] } } }],
    ['storage.disk.dir', { storage: { disk: { dir: '/etc' } } }],
    ['db.dir', { db: { dir: join(app.dir, 'disk') } }],
  ] as const) {
    const r = await app.request('PUT', '/api/v3/config', { body });
    t.equal(r.status, 400, `${key}: 400`);
    t.match(r.body, { code: 400, message: String, details: [new RegExp(`^${key.replace('.', '\\.')}: can only be set in the config file or the environment`)] }, `${key}: named`);
  }
  t.notOk(existsSync(mark), 'the module never ran');
  t.equal(readFileSync(app.configPath, 'utf8'), before, 'nothing stored');

  // clients send back the whole config they read: unchanged operator keys are fine
  const whole = (await app.request('GET', '/api/v3/config')).body.config;
  whole.name = 'renamed';
  const ok = await app.request('PUT', '/api/v3/config', { body: whole });
  t.equal(ok.status, 200, ok.text);
  t.equal(JSON.parse(readFileSync(app.configPath, 'utf8')).name, 'renamed');
});

t.test('a value the environment set may come back in a PUT; the file keeps its own', async (t) => {
  const app = await startApp(t, { config: { encoder: { binary: '/usr/bin/ffmpeg' } }, env: cleanEnv({ CORE_ENCODER_BINARY: 'ffmpeg' }) });
  const whole = (await app.request('GET', '/api/v3/config')).body.config;
  t.equal(whole.encoder.binary, 'ffmpeg');
  t.equal((await app.request('PUT', '/api/v3/config', { body: whole })).status, 200);
  t.equal(JSON.parse(readFileSync(app.configPath, 'utf8')).encoder.binary, '/usr/bin/ffmpeg');
});

t.test('a reload imports nothing the start did not', async (t) => {
  const app = await startApp(t);
  const mark = join(app.dir, 'imported');
  writeFileSync(join(app.dir, 'elsewhere.mjs'), evilModule(mark));
  const cfg = JSON.parse(readFileSync(app.configPath, 'utf8'));
  writeFileSync(app.configPath, JSON.stringify({ ...cfg, plugins: ['*', join(app.dir, 'elsewhere.mjs')] }));
  const r = await app.request('GET', '/api/v3/config/reload');
  t.equal(r.status, 400, 'the reload is refused');
  t.match(JSON.stringify(r.body), /plugins: changed in the config file/);
  await waitFor(async () => (await app.request('GET', '/api/v3/log?format=raw')).body.some((e: { message?: string }) => /reload refused: plugins changed/.test(e.message ?? '')),
    { what: 'the refusal in the log' });
  t.notOk(existsSync(mark), 'not imported');
  t.equal((await app.request('GET', '/ping')).text, 'pong', 'the running app answers');
  t.match(JSON.parse(readFileSync(app.configPath, 'utf8')).plugins, ['*', String], 'the operator\'s file stays as written (for the next start)');
});

t.test('a module in a folder the API writes never loads, even from the config file', async (t) => {
  for (const where of ['disk', 'db'] as const) {
    const app = await startApp(t);
    const mark = join(app.dir, `imported-${where}`);
    const file = join(app.dir, where, 'plugin.mjs');
    writeFileSync(file, evilModule(mark));
    await app.service.close();
    const cfg = JSON.parse(readFileSync(app.configPath, 'utf8'));
    writeFileSync(app.configPath, JSON.stringify({ ...cfg, plugins: ['*', file] }));
    let err: Error | undefined;
    try { await startApp(t, { dir: app.dir }); } catch (e) { err = e as Error; }
    t.match(err?.message, /lies in .*a folder the API can write/, `${where}: the start stops with why`);
    t.notOk(existsSync(mark), `${where}: never imported`);
  }
});
