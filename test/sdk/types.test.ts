import t from 'tap';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The SDK's type tests (test/types, a `tsc -p` project of their own): they type-check, and they
 * stop type-checking when `definePlugin` loses its inference, so the suite guards the types a
 * plugin author relies on and not only the code.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** The compiler, not profiled by a covered tap run (it is no code of this repository). */
function tsc(project: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [TSC, '--noEmit', '--pretty', 'false', '-p', project], { cwd: ROOT, timeout: 120_000, env: { ...process.env, _TAPJS_PROCESSINFO_COVERAGE_: '0' } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: `${stdout}${stderr}` });
    });
  });
}

t.test('test/types type-checks: definePlugin infers config, deps and sections; the expected errors are errors', async (t) => {
  const r = await tsc(join(ROOT, 'test', 'types'));
  t.equal(r.code, 0, r.out || 'tsc -p test/types is clean');
});

t.test('without definePlugin\'s inference the type tests fail', async (t) => {
  // the same SDK, but a definePlugin that keeps nothing of its argument's types
  const dir = t.testdir({
    'sdk.ts': [
      `export * from '${join(ROOT, 'sdk', 'contract.ts')}';`,
      `import type { PluginDefinition } from '${join(ROOT, 'sdk', 'contract.ts')}';`,
      'export declare function definePlugin(def: PluginDefinition): PluginDefinition;',
      '',
    ].join('\n'),
  });
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    extends: join(ROOT, 'tsconfig.json'),
    compilerOptions: { paths: { '@media-core/sdk': ['./sdk.ts'] } },
    files: [join(ROOT, 'test', 'types', 'define-plugin.ts')],
  }));
  const r = await tsc(dir);
  t.not(r.code, 0, 'tsc fails');
  t.match(r.out, /define-plugin\.ts\(\d+,\d+\): error TS2578: Unused '@ts-expect-error' directive/, 'expected errors go missing');
  t.match(r.out, /define-plugin\.ts\(\d+,\d+\): error TS2344/, 'the Equal checks fail');
});
