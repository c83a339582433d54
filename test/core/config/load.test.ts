import '../../../app/install.ts'; // this service's built-ins, installed into the core
import t from 'tap';
import { mkdtemp, readFile, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, persistLoaded, resolveConfigPath } from '../../../core/config/load.ts';
import { semanticErrors, typeErrors } from '../../../core/config/validate.ts';
import { envTable } from '../../../core/config/env.ts';
import type { TestLike } from '../../helpers/app.ts';

async function tmp(t: TestLike): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'core-config-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

t.test('first start writes every default and generated secret, and keeps them', async (t) => {
  const dir = await tmp(t);
  const path = join(dir, 'sub', 'config.json');
  const first = await loadConfig(path, {});
  t.equal(first.fresh, true);
  t.equal(first.unsaved, true, 'not written before it boots');
  await persistLoaded(first);
  const stored = JSON.parse(await readFile(path, 'utf8'));
  t.equal(stored.version, 3);
  t.equal(stored.address, ':8080');
  t.equal(stored.log.max_lines, 1000);
  t.equal(stored.encoder.log.max_lines, 50);
  t.equal(stored.encoder.log.max_history, 3);
  t.same(stored.storage.disk.cache.types.block, ['.m3u8', '.mpd']);
  t.same(stored.sessions.ip_ignorelist, ['127.0.0.1/32', '::1/128']);
  t.equal(stored.storage.memory.auth.username, 'admin');
  t.equal(stored.storage.memory.auth.password.length, 18);
  t.equal(stored.api.auth.jwt.secret.length, 32);
  t.match(stored.id, /^[0-9a-f-]{36}$/);
  t.match(stored.name, /^[a-z]+-[a-z]+-\d{4}$/);
  t.same(stored.ffmpeg, stored.encoder, 'both names of the encoder section are written');
  t.same(stored.api.auth.auth0, stored.api.auth.idp);
  t.same(stored.plugins, ['*']);
  const second = await loadConfig(path, {});
  t.equal(second.fresh, false);
  t.equal(second.active.id, first.active.id, 'id persisted');
  t.equal(second.active.api.auth.jwt.secret, first.active.api.auth.jwt.secret, 'secret persisted');
  t.same(typeErrors(second.active), {});
});

t.test('CORE_* variables override the file, with aliases and list separators', async (t) => {
  const dir = await tmp(t);
  const path = join(dir, 'config.json');
  await writeFile(path, JSON.stringify({ version: 3, name: 'from-file', ffmpeg: { binary: 'from-file' } }));
  const { active, stored, env } = await loadConfig(path, {
    CORE_NAME: 'from-env',
    CORE_ADDRESS: '127.0.0.1:9999',
    CORE_FFMPEG_BINARY: '/usr/bin/ffmpeg',
    CORE_API_AUTH_AUTH0_ENABLE: 'true',
    CORE_HOST_NAME: 'a.example, b.example,,',
    CORE_STORAGE_DISK_CACHE_TYPES_ALLOW: '.ts .mp4',
    CORE_FFMPEG_MAXPROCESSES: '7',
    CORE_METRICS_RANGE_SECONDS: '120',
    CORE_ROUTER_ROUTES: '/a:/b /c:/d',
    CORE_LOG_MAXLINES: '12',
  });
  t.equal(active.name, 'from-env');
  t.equal(stored.name, 'from-file', 'the file keeps its own value');
  t.equal(active.address, '127.0.0.1:9999');
  t.equal(active.encoder.binary, '/usr/bin/ffmpeg', 'CORE_FFMPEG_* sets the encoder section');
  t.equal(active.ffmpeg.binary, '/usr/bin/ffmpeg', 'and its alias');
  t.equal(stored.encoder.binary, 'from-file', 'a file with only the ffmpeg name fills encoder');
  t.equal(active.api.auth.idp.enable, true);
  t.equal(active.api.auth.auth0.enable, true);
  t.same(active.host.name, ['a.example', 'b.example']);
  t.same(active.storage.disk.cache.types.allow, ['.ts', '.mp4']);
  t.equal(active.encoder.max_processes, 7);
  t.equal(active.metrics.range_sec, 120);
  t.same(active.router.routes, { '/a': '/b', '/c': '/d' });
  t.equal(active.log.max_lines, 12);
  t.ok(env.overrides.includes('name') && env.overrides.includes('encoder.binary'));
  t.match(env.warnings.join(), /CORE_LOG_MAXLINES is deprecated/);
});

t.test('bad environment values are errors with their variable', async (t) => {
  const dir = await tmp(t);
  const { env } = await loadConfig(join(dir, 'c.json'), { CORE_API_AUTH_ENABLE: 'maybe', CORE_LOG_MAX_LINES: 'ten' });
  t.match(env.errors['api.auth.enable']?.[0], /CORE_API_AUTH_ENABLE: 'maybe' is not a boolean/);
  t.match(env.errors['log.max_lines']?.[0], /not an integer/);
});

t.test('every key has a CORE_ variable', async (t) => {
  const names = envTable().map((e) => e.spec.names[0]);
  t.ok(names.length > 80);
  t.ok(names.includes('CORE_API_AUTH_JWT_SECRET'));
  t.ok(names.includes('CORE_ENCODER_BINARY'));
  t.ok(envTable().find((e) => e.path === 'encoder.binary')!.spec.names.includes('CORE_FFMPEG_BINARY'));
  t.ok(names.includes('CORE_STORAGE_MEMORY_MAX_SIZE_MBYTES'));
});

t.test('--config and CORE_CONFIGFILE choose the file', async (t) => {
  t.match(resolveConfigPath(['--config', 'x/y.json'], {}), /x\/y\.json$/);
  t.match(resolveConfigPath(['--config=z.json'], { CORE_CONFIGFILE: 'no.json' }), /\/z\.json$/);
  t.match(resolveConfigPath([], { CORE_CONFIGFILE: '/etc/core.json' }), /^\/etc\/core\.json$/);
  t.match(resolveConfigPath([], {}), /data\/config\.json$/);
});

t.test('validation reports every error with its path at once', async (t) => {
  const dir = await tmp(t);
  const { active } = await loadConfig(join(dir, 'c.json'), {});
  const bad = structuredClone(active);
  bad.api.auth.enable = true;
  bad.api.access.http.allow = ['10.0.0.0/33', 'nonsense'];
  bad.encoder.access.input.block = ['(unclosed'];
  bad.storage.mimetypes_file = '/no/such/mime.types';
  bad.playout.enable = true;
  bad.address = 'nope';
  bad.log.level = 'loud';
  bad.plugins = ['disk-fs'];
  bad.rtmp.enable = true;
  const errs = await semanticErrors(bad);
  t.same(Object.keys(errs).sort(), [
    'log.level', 'api.access.http.allow', 'api.auth.enable', 'api.auth.enable', 'encoder.access.input.block',
    'playout.enable', 'playout.min_port', 'rtmp.enable', 'storage.mimetypes_file',
  ].filter((v, i, a) => a.indexOf(v) === i).sort());
  t.equal(errs['api.access.http.allow']!.length, 2);
  t.match(errs['rtmp.enable']![0], /plugin 'rtmp' is not loaded/);
  t.match(errs['api.auth.enable']!.join(), /plugin 'auth' is not loaded/);
  const types = typeErrors({ ...active, log: { ...active.log, level: 5, max_lines: 'x' }, rtmp: { ...active.rtmp, enable: 'yes' } });
  t.same(Object.keys(types).sort(), ['log.level', 'log.max_lines', 'rtmp.enable']);
  // an address of the wrong form is the shape check's (400 at PUT; issue 44.4), with the form it wants
  t.match(typeErrors(bad), { address: [/^'nope' is not a host:port address/] });
});

t.test('an unreadable config file stops the boot and is never overwritten', async (t) => {
  const dir = await tmp(t);
  const path = join(dir, 'config.json');
  await writeFile(path, '{"version": 3, "name": ');
  await t.rejects(loadConfig(path, {}), /not valid JSON/);
  t.equal(await readFile(path, 'utf8'), '{"version": 3, "name": ');
  await writeFile(path, '{"version": 9}');
  await t.rejects(loadConfig(path, {}), /unknown layout version 9/);
  t.equal(await readFile(path, 'utf8'), '{"version": 9}');
});

t.test('a start the config\'s validation refuses leaves the file as the operator wrote it; one that boots completes it', async (t) => {
  const { startApp } = await import('../../helpers/app.ts');
  const dir = await tmp(t);
  const path = join(dir, 'config.json');
  const text = (rtmp: string) => `// the operator's notes\n{ "version": 3, "db": { "dir": ${JSON.stringify(join(dir, 'db'))} },\n`
    + `  "storage": { "disk": { "dir": ${JSON.stringify(join(dir, 'disk'))} } }, "rtmp": { "enable": true, "address": ${JSON.stringify(rtmp)} } }\n`;
  await writeFile(path, text('not an address'));
  await t.rejects(startApp(t, { dir }), /rtmp\.address/, 'refused');
  t.equal(await readFile(path, 'utf8'), text('not an address'), 'the file is untouched: its comment, no generated values');
  await writeFile(path, text('127.0.0.1:0'));
  await startApp(t, { dir });
  const stored = JSON.parse(await readFile(path, 'utf8'));
  t.ok(stored.created_at && stored.id, 'a config that boots is completed and written');
});
