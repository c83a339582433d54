import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const LINT = fileURLToPath(new URL('../../scripts/lint-imports.mjs', import.meta.url));

function lint(root: string): { code: number; out: string } {
  try {
    return { code: 0, out: execFileSync(process.execPath, [LINT, root], { encoding: 'utf8', stdio: 'pipe' }) };
  } catch (err) {
    const e = err as { status: number; stderr: string };
    return { code: e.status, out: e.stderr };
  }
}

t.test('plugins may import sdk/, their own folder and packages only', async (t) => {
  const root = t.testdirName;
  mkdirSync(join(root, 'plugins', 'good'), { recursive: true });
  mkdirSync(join(root, 'plugins', 'bad'), { recursive: true });
  mkdirSync(join(root, 'sdk'), { recursive: true });
  writeFileSync(join(root, 'plugins', 'good', 'index.ts'), "import { x } from '../../sdk/index.ts';\nimport { y } from './service.ts';\nimport fastify from 'fastify';\n");
  writeFileSync(join(root, 'plugins', 'bad', 'index.ts'), "import { App } from '../../core/app.ts';\nconst m = await import('../good/index.ts');\n");
  const r = lint(root);
  t.equal(r.code, 1);
  t.match(r.out, /plugins\/bad\/index\.ts: imports \.\.\/\.\.\/core\/app\.ts/);
  t.match(r.out, /plugins\/bad\/index\.ts: imports \.\.\/good\/index\.ts/);
  t.notMatch(r.out, /plugins\/good/);
  writeFileSync(join(root, 'plugins', 'bad', 'index.ts'), "export {};\n");
  t.equal(lint(root).code, 0);
});

t.test('of another plugin, a plugin imports exactly its api.ts; an api.ts imports only sdk/ (issue 45.2)', async (t) => {
  const root = t.testdir({ sdk: { 'index.ts': 'export {};\n' }, plugins: { owner: {}, user: {} } });
  writeFileSync(join(root, 'plugins', 'owner', 'api.ts'), "import { createServiceRef } from '../../sdk/index.ts';\nexport const r = createServiceRef('o');\n");
  writeFileSync(join(root, 'plugins', 'user', 'index.ts'), "import { r } from '../owner/api.ts';\nimport type { R } from '../owner/api.ts';\n");
  t.equal(lint(root).code, 0, 'another plugin\'s api.ts is fine');
  writeFileSync(join(root, 'plugins', 'user', 'index.ts'), "import { s } from '../owner/service.ts';\nconst a = await import('../owner/sub/api.ts');\n");
  writeFileSync(join(root, 'plugins', 'owner', 'api.ts'), "import { S } from './service.ts';\nexport type X = S;\n");
  const r = lint(root);
  t.equal(r.code, 1);
  t.match(r.out, /plugins\/user\/index\.ts: imports \.\.\/owner\/service\.ts \(of another plugin only its api\.ts\)/);
  t.match(r.out, /plugins\/user\/index\.ts: imports \.\.\/owner\/sub\/api\.ts/);
  t.match(r.out, /plugins\/owner\/api\.ts: imports \.\/service\.ts \(a plugin's api\.ts imports only sdk\/\)/);
});

t.test('a vendor example imports a built-in\'s contract as @media-core/plugins/<name>/api only', async (t) => {
  const root = t.testdir({ examples: { vendor: {} } });
  writeFileSync(join(root, 'examples', 'vendor', 'index.ts'), "import { sessionsRef } from '@media-core/plugins/sessions/api';\n");
  t.equal(lint(root).code, 0);
  writeFileSync(join(root, 'examples', 'vendor', 'index.ts'), "import { x } from '@media-core/plugins/sessions/registry.ts';\nimport y from '@media-core/plugins';\n");
  const r = lint(root);
  t.equal(r.code, 1);
  t.match(r.out, /examples\/vendor\/index\.ts: imports @media-core\/plugins\/sessions\/registry\.ts \(of a built-in only/);
  t.match(r.out, /examples\/vendor\/index\.ts: imports @media-core\/plugins \(of a built-in only/);
});

t.test('a vendor example imports the SDK by name, never a path out of its folder', async (t) => {
  const root = t.testdirName;
  mkdirSync(join(root, 'examples', 'vendor', 'node_modules', 'dep'), { recursive: true });
  writeFileSync(join(root, 'examples', 'vendor', 'index.ts'), "import { definePlugin } from '@media-core/sdk';\nimport { a } from './a.ts';\n");
  writeFileSync(join(root, 'examples', 'vendor', 'node_modules', 'dep', 'x.js'), "import '../../../../sdk/index.ts';\n");
  t.equal(lint(root).code, 0, 'own files and packages; node_modules is not linted');
  writeFileSync(join(root, 'examples', 'vendor', 'index.ts'), "import { definePlugin } from '../../sdk/index.ts';\n");
  const r = lint(root);
  t.equal(r.code, 1);
  t.match(r.out, /examples\/vendor\/index\.ts: imports \.\.\/\.\.\/sdk\/index\.ts \(use @media-core\/sdk\)/);
});

t.test('a plugin starts no program itself: child_process is the core\'s (childrenRef)', async (t) => {
  const root = t.testdir({ plugins: { p: {} } });
  writeFileSync(join(root, 'plugins', 'p', 'a.ts'), "import type { ChildProcess } from 'node:child_process';\nexport type X = ChildProcess;\n");
  t.equal(lint(root).code, 0, 'types only are fine');
  writeFileSync(join(root, 'plugins', 'p', 'b.ts'), "import { spawn } from 'node:child_process';\nspawn('ffmpeg', []);\n");
  const r = lint(root);
  t.equal(r.code, 1);
  t.match(r.out, /plugins\/p\/b\.ts: imports child_process \(start programs through childrenRef\)/);
});

t.test('core/config imports nothing of core/kernel (the kernel plans from the config)', async (t) => {
  const root = t.testdir({ core: { config: {}, kernel: {}, http: {} } });
  writeFileSync(join(root, 'core', 'kernel', 'plan.ts'), "import { semanticErrors } from '../config/validate.ts';\n");
  writeFileSync(join(root, 'core', 'config', 'validate.ts'), "import { x } from '../http/router-config.ts';\nexport const semanticErrors = x;\n");
  t.equal(lint(root).code, 0, 'kernel -> config and config -> http are fine');
  writeFileSync(join(root, 'core', 'config', 'owners.ts'), "import type { LoadedPlugin } from '../kernel/loader.ts';\nconst l = await import('../kernel/loader.ts');\n");
  const r = lint(root);
  t.equal(r.code, 1);
  t.match(r.out, /core\/config\/owners\.ts: imports \.\.\/kernel\/loader\.ts \(core\/config\/ imports nothing of core\/kernel\/\)/);
});

t.test('sdk/ imports nothing of core/; the test kit names the core and the SDK by package', async (t) => {
  const root = t.testdir({ sdk: { 'refs.ts': "export const a = 1;\n" }, core: { 'app.ts': 'export {};\n' }, testkit: {} });
  writeFileSync(join(root, 'testkit', 'index.ts'), "import { buildApp } from '@media-core/core/app';\nimport type { ServiceRef } from '@media-core/sdk';\nimport { x } from './request.ts';\n");
  t.equal(lint(root).code, 0, 'package names and its own files');
  writeFileSync(join(root, 'sdk', 'testing.ts'), "import { buildApp } from '../core/app.ts';\nimport { k } from '@media-core/testkit';\n");
  writeFileSync(join(root, 'testkit', 'index.ts'), "import { buildApp } from '../core/app.ts';\n");
  const r = lint(root);
  t.equal(r.code, 1);
  t.match(r.out, /sdk\/testing\.ts: imports \.\.\/core\/app\.ts \(the SDK imports nothing of the core/);
  t.match(r.out, /sdk\/testing\.ts: imports @media-core\/testkit/);
  t.match(r.out, /testkit\/index\.ts: imports \.\.\/core\/app\.ts \(use @media-core\/core/);
});

t.test('core/ and sdk/ import nothing of plugins/ or app/ (the app composes them; issue 45.3)', async (t) => {
  const root = t.testdir({ sdk: { 'refs.ts': "export const a = 1;\n" }, core: { config: {} }, plugins: { memfs: { 'index.ts': "export default {};\n" } }, app: {} });
  writeFileSync(join(root, 'app', 'built-ins.ts'), "import memfs from '../plugins/memfs/index.ts';\nimport { x } from '../core/config/build.ts';\n");
  writeFileSync(join(root, 'core', 'config', 'build.ts'), "import { a } from '../../sdk/refs.ts';\nexport const x = a;\n");
  t.equal(lint(root).code, 0, 'the app imports the core and the plugins; the core the SDK');
  writeFileSync(join(root, 'core', 'config', 'built-ins.ts'), "import memfs from '../../plugins/memfs/index.ts';\nconst b = await import('../../app/build.ts');\n");
  writeFileSync(join(root, 'sdk', 'all.ts'), "import { BUILD } from '@media-core/app';\nimport m from '../plugins/memfs/index.ts';\n");
  const r = lint(root);
  t.equal(r.code, 1);
  t.match(r.out, /core\/config\/built-ins\.ts: imports \.\.\/\.\.\/plugins\/memfs\/index\.ts \(core\/ and sdk\/ import nothing of plugins\/ or app\/\)/);
  t.match(r.out, /core\/config\/built-ins\.ts: imports \.\.\/\.\.\/app\/build\.ts/);
  t.match(r.out, /sdk\/all\.ts: imports @media-core\/app/);
  t.match(r.out, /sdk\/all\.ts: imports \.\.\/plugins\/memfs\/index\.ts/);
});
