import t from 'tap';
import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { ROOT, vendorEnv, vendorProject } from '../../scripts/testkit-vendor.ts';

/**
 * The test kit as a vendor gets it (issue 30): sdk/, core/, the built-ins and testkit/ packed with
 * `npm pack`, installed from the tarballs in a folder outside this repository next to a copy of the
 * HTTP-TS example, whose own tests then run with its own tap. The install comes from the npm cache
 * (scripts/ensure-deps.sh fills it: scripts/testkit-vendor.ts --warm). Only the example's
 * in-process tests run there; its ffmpeg test runs in this suite from the sources.
 */
const IN_PROCESS_TESTS = ['test/ingest.test.ts', 'test/ts-packets.test.ts'];

function run(file: string, args: string[], cwd: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [file, ...args], { cwd, env: vendorEnv(), timeout: 150_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: `${stdout}\n${stderr}` });
    });
  });
}

t.test('packed sdk, core, built-ins and test kit install in a vendor project and run its tests', async (t) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'testkit-vendor-')));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  t.ok(relative(ROOT, dir).startsWith('..'), `${dir} is outside the repository`);

  const vendor = await vendorProject(dir);
  const modules = join(vendor, 'node_modules', '@media-core');
  for (const name of ['sdk', 'core', 'plugins', 'testkit']) {
    t.notOk(lstatSync(join(modules, name)).isSymbolicLink(), `@media-core/${name} is installed from its tarball, not linked`);
  }
  t.ok(existsSync(join(modules, 'testkit', 'index.js')) && existsSync(join(modules, 'core', 'app.js')), 'the packages ship JavaScript');
  t.ok(existsSync(join(modules, 'plugins', 'memfs', 'index.js')), 'the built-ins sit beside the core');
  const manifest = JSON.parse(readFileSync(join(vendor, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
  t.match(manifest.devDependencies['@media-core/testkit'], /^file:.*\.tgz$/, 'the test kit is a dev dependency of the vendor project');

  const tapBin = realpathSync(join(vendor, 'node_modules', '.bin', 'tap'));
  t.ok(tapBin.startsWith(vendor), 'the vendor project runs its own tap');
  const r = await run(tapBin, IN_PROCESS_TESTS, vendor);
  t.equal(r.code, 0, r.code === 0 ? 'the example\'s tests pass' : r.out.slice(-4000));
  const summary = /# \{ total: (\d+), pass: (\d+)/.exec(r.out);
  t.ok(summary && Number(summary[1]) > 10 && summary[1] === summary[2], `every assertion passed (${summary?.[0] ?? 'no summary'})`);
});
