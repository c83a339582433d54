import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanEnv } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';

/*
 * Plain JavaScript at run time (issue 29): scripts/build.mjs strips the types of core/, sdk/ and
 * plugins/ into a .js next to each source (every line and column kept, relative `.ts` imports
 * renamed), rebuilds only what changed, removes what lost its source; the service started from
 * app/main.js loads no TypeScript at all, and relaunches itself once with its V8 flags.
 */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const BUILD = join(ROOT, 'scripts/build.mjs');
const build = (root: string, ...args: string[]) => spawnSync(process.execPath, [BUILD, '--root', root, ...args], { encoding: 'utf8' });

t.test('the build strips types in place, keeps lines, renames imports, rebuilds what changed, drops orphans', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'core-build-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  await mkdir(join(root, 'core/x'), { recursive: true });
  await mkdir(join(root, 'core/test'), { recursive: true });
  // an ES module tree, as the service's own package.json says
  await writeFile(join(root, 'package.json'), '{"type":"module"}\n');
  await writeFile(join(root, 'core/x/a.ts'), [
    "import { b, type B } from './b.ts';",
    'interface Local { n: number }',
    "export const a = (v: Local): B => ({ ...b, n: v.n });",
    "export const later = () => import('../x/b.ts');",
    "export const url = new URL('./b.ts', import.meta.url).href;",
    '',
  ].join('\n'));
  await writeFile(join(root, 'core/x/b.ts'), "export type B = { n: number };\nexport const b: B = { n: 1 };\n");
  await writeFile(join(root, 'core/test/skip.ts'), 'export const s: number = 1;\n');
  await writeFile(join(root, 'core/x/skip.test.ts'), 'export const s: number = 1;\n');
  t.equal(build(root, '--check').status, 1, 'stale before the first build');
  t.equal(build(root).status, 0);
  const a = readFileSync(join(root, 'core/x/a.js'), 'utf8');
  const lines = a.split('\n');
  t.match(lines[0], /^import \{ b,\s+\} from '\.\/b\.js';/, 'a relative .ts import becomes .js, type imports blanked');
  t.equal(lines[2]!.indexOf('=>'), "export const a = (v: Local): B => ({ ...b, n: v.n });".indexOf('=>'), 'columns kept');
  t.match(lines[3], /import\('\.\.\/x\/b\.js'\)/, 'a literal dynamic import too');
  t.match(lines[4], /new URL\('\.\/b\.ts'/, 'a URL string is left alone (siblingModule picks the form at run time)');
  t.match(a, /\/\/# sourceMappingURL=a\.js\.map\n$/, 'with its map');
  t.same(JSON.parse(readFileSync(join(root, 'core/x/a.js.map'), 'utf8')).sources, ['a.ts']);
  t.notOk(existsSync(join(root, 'core/test/skip.js')), 'tests are not built');
  t.notOk(existsSync(join(root, 'core/x/skip.test.js')), 'test files are not built');
  const m = await import(join(root, 'core/x/a.js'));
  t.same(m.a({ n: 5 }), { n: 5 }, 'the built module runs');
  t.equal(build(root, '--check').status, 0, 'fresh after the build');

  const later = new Date(Date.now() + 5000);
  await utimes(join(root, 'core/x/b.ts'), later, later);
  const check = build(root, '--check');
  t.equal(check.stdout.trim(), 'stale: core/x/b.ts', 'a changed source, and only it, is rebuilt by the next start');
  await rm(join(root, 'core/x/b.ts'));
  t.equal(build(root).status, 0);
  t.notOk(existsSync(join(root, 'core/x/b.js')), 'a built file whose source is gone is removed');
  t.notOk(existsSync(join(root, 'core/x/b.js.map')));
});

/**
 * A preload that writes every module URL ending in .ts to a file, and every one of TypeBox's (as
 * installed or from its pack) to another: it survives the relaunch (execArgv).
 */
async function tsWatch(dir: string): Promise<{ hook: string; log: string; typebox: string }> {
  const log = join(dir, 'ts-loads.txt');
  const typebox = join(dir, 'typebox-loads.txt');
  const hook = join(dir, 'hook.mjs');
  await writeFile(hook, [
    "import { registerHooks } from 'node:module';",
    "import { appendFileSync } from 'node:fs';",
    'registerHooks({ load(url, ctx, next) {',
    `  if (url.endsWith('.ts')) appendFileSync(${JSON.stringify(log)}, url + '\\n');`,
    `  if (/typebox/.test(url)) appendFileSync(${JSON.stringify(typebox)}, url + '\\n');`,
    '  return next(url, ctx);',
    '} });',
  ].join('\n'));
  await writeFile(log, '');
  await writeFile(typebox, '');
  return { hook, log, typebox };
}

t.test('the built service loads no TypeScript and runs with its V8 flags (same PID)', async (t) => {
  t.equal(spawnSync(process.execPath, [BUILD], { encoding: 'utf8' }).status, 0, 'the repository builds');
  const dir = await mkdtemp(join(tmpdir(), 'core-built-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const { hook, log, typebox } = await tsWatch(dir);
  const config = join(dir, 'config.json');
  await writeFile(config, JSON.stringify({
    version: 3, address: '127.0.0.1:0', update_check: false, db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } },
    http: { threads: 0 }, debug: { memory_limit_mbytes: 300 },
  }));
  const child = spawn(process.execPath, ['--import', hook, join(ROOT, 'app/main.js'), '--config', config],
    { env: cleanEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  let err = '';
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`no URL: ${err}`)), 60_000);
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) { clearTimeout(timer); res(m[1]!); }
    });
  });
  const cmd = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  t.ok(cmd.includes('--max-semi-space-size=2'), `the semi-space flag: ${cmd.join(' ')}`);
  t.ok(cmd.includes('--max-old-space-size=236'), 'the old space from debug.memory_limit_mbytes (300 - 64)');
  t.equal(cmd.filter((a) => a.endsWith('app/main.js')).length, 1, 'the built entry, once');
  const q = await fetch(`${url}/api/graph/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ ping }"}' });
  t.equal(q.status, 200, 'GraphQL (loaded at its first query) answers');
  t.equal((await fetch(`${url}/api/v3/process`)).status, 200);
  t.equal(readFileSync(log, 'utf8'), '', 'no .ts module loaded: no type stripper in the service');
  // issue 46.4: TypeBox's 247 modules as one (scripts/pack-cjs.mjs, core/runtime/packed.ts)
  const tb = readFileSync(typebox, 'utf8').split('\n').filter(Boolean);
  t.ok(tb.length > 0 && tb.every((u) => u.includes('/node_modules/.cache/media-core/packed/@sinclair+typebox/')), `TypeBox from its pack only: ${tb.slice(0, 3).join(' ')}`);
  // issue 46.4: the modules' compiled code kept with the installation (core/runtime/compile-cache.ts)
  const cache = join(ROOT, 'node_modules/.cache/media-core/compiled');
  const entries = await waitFor(() => {
    const n = existsSync(cache) ? readdirSync(cache).flatMap((d) => readdirSync(join(cache, d))).length : 0;
    return n > 100 ? n : undefined;
  }, { what: 'the compile cache written once the service runs' });
  t.ok(entries > 100, `the compile cache holds the service's modules (${entries} entries)`);
  child.kill('SIGTERM');
  const code = await new Promise((res) => child.once('exit', res));
  t.equal(code, 0, 'SIGTERM reaches the relaunched service (the same process)');
});
