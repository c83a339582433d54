/**
 * Shows that the core, the SDK and the test kit install and test without plugins/ or app/ (issue
 * 45.3): copies core/, sdk/ and testkit/ with the core's in-process tests that need no plugin
 * (CORE_ALONE_TESTS, the files of test/ they import, and the media of test/fixtures/) into a temp folder beside a node_modules
 * of links to this repository's packages (but `@media-core/*`: the copies), then runs tsc on the
 * copy and tap on those tests there. test/deploy/core-alone.test.ts runs it.
 *
 *   node scripts/core-alone.ts [DIR]     DIR is kept (default: a temp folder, removed)
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The core's own tests that need no plugin: kernel, config, process engine, stream table, runtime, and the kit with the core alone. */
export const CORE_ALONE_TESTS = [
  'test/core/alone.test.ts',
  'test/core/kernel/graph.test.ts',
  'test/core/kernel/semver-range.test.ts',
  'test/core/config/jsonc.test.ts',
  'test/core/process/placeholders.test.ts',
  'test/core/process/units.test.ts',
  'test/core/streams/table.test.ts',
  'test/core/streams/demand.test.ts',
  'test/core/runtime/flags.test.ts',
];

/** `file` and the files of test/ it imports, transitively (repository-relative paths). */
function testFiles(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(join(ROOT, file), 'utf8');
  for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const target = relative(ROOT, resolve(dirname(join(ROOT, file)), m[1]!));
    if (target.startsWith('test/') && existsSync(join(ROOT, target))) testFiles(target, seen);
  }
  return seen;
}

const skip = (src: string) => /(^|\/)(node_modules|\.tap)(\/|$)/.test(src) || /\.js(\.map)?$/.test(src);

/** The copy: core/, sdk/, testkit/, the tests, a package.json, a tsconfig.json and node_modules without the app or the plugins. */
export function stage(dir: string): void {
  for (const tree of ['core', 'sdk', 'testkit']) cpSync(join(ROOT, tree), join(dir, tree), { recursive: true, filter: (s) => !skip(relative(ROOT, s)) });
  const tests = new Set<string>();
  for (const t of CORE_ALONE_TESTS) testFiles(t, tests);
  // the media the tests feed (no code)
  cpSync(join(ROOT, 'test', 'fixtures'), join(dir, 'test', 'fixtures'), { recursive: true, filter: (s) => !/\.ts$/.test(s) });
  for (const f of tests) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    cpSync(join(ROOT, f), join(dir, f));
  }
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, '@media-core'), { recursive: true });
  for (const name of readdirSync(join(ROOT, 'node_modules'))) {
    if (name !== '@media-core') symlinkSync(join(ROOT, 'node_modules', name), join(modules, name));
  }
  for (const name of ['core', 'sdk', 'testkit']) symlinkSync(join(dir, name), join(modules, '@media-core', name));
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { tap: Record<string, unknown> };
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'core-alone', private: true, type: 'module', tap: { ...pkg.tap, include: [] } }, null, 2));
  const ts = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { include: string[] };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ ...ts, include: ['core', 'sdk', 'testkit', 'test'] }, null, 2));
}

/** Stages into `dir` and runs tsc and the tests there; throws (with their output) when one fails. */
export function run(dir: string): void {
  stage(dir);
  for (const gone of ['plugins', 'app']) if (existsSync(join(dir, gone))) throw new Error(`${gone}/ is in the copy`);
  const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);
  const env = { ...process.env, NODE_OPTIONS: '' };
  execFileSync(bin('tsc'), ['-p', dir, '--noEmit'], { cwd: dir, env, stdio: 'inherit' });
  console.log('core-alone: tsc clean on core/, sdk/, testkit/ and the tests, without plugins/ or app/');
  execFileSync(bin('tap'), ['--disable-coverage', ...CORE_ALONE_TESTS], { cwd: dir, env, stdio: 'inherit' });
  console.log(`core-alone: ${CORE_ALONE_TESTS.length} test files pass without plugins/ or app/`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const given = process.argv[2];
  const dir = given ? resolve(given) : mkdtempSync(join(tmpdir(), 'core-alone-'));
  if (given) mkdirSync(dir, { recursive: true });
  try {
    run(dir);
  } catch (err) {
    console.error(`core-alone: ${(err as Error).message.split('\n')[0]}`);
    process.exitCode = 1;
  } finally {
    if (!given) rmSync(dir, { recursive: true, force: true });
  }
}
