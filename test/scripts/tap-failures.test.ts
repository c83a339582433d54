import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../scripts/tap-failures.mjs', import.meta.url));

/** A results file as tap 21 writes it: a failed leaf inside two subtests, and a failed top-level leaf. */
const FAILED = `TAP version 14
# Subtest: outer
    # Subtest: inner
        ok 1 - fine
        not ok 2 - should be equal
          ---
          found: 1
          wanted: 2
          ...
        1..2
    not ok 1 - inner # time=3ms
    1..1
not ok 1 - outer # time=5.2ms
not ok 2 - top-level leaf
1..2
`;

const run = (cwd: string, since: number) => execFileSync(process.execPath, [SCRIPT, String(since)], { cwd, encoding: 'utf8' });

t.test('the failed leaves again, with their subtest path and diagnostics; not the parents that repeat them', async (t) => {
  const root = t.testdirName;
  const dir = join(root, '.tap', 'test-results', 'test', 'a');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'x.test.ts.tap'), FAILED);
  writeFileSync(join(dir, 'ok.test.ts.tap'), 'TAP version 14\nok 1 - fine\n1..1\n');
  const out = run(root, 0);
  t.match(out, /failed assertions/);
  t.match(out, /^test\/a\/x\.test\.ts: outer > inner > should be equal$/m);
  t.match(out, /wanted: 2/);
  t.match(out, /^test\/a\/x\.test\.ts: top-level leaf$/m);
  t.notMatch(out, /: outer # time|> inner # time|: outer$/m, 'parents are not repeated');
  t.notMatch(out, /ok\.test\.ts/);
  // results older than the run (left by an earlier one) are not reported
  utimesSync(join(dir, 'x.test.ts.tap'), new Date(1000), new Date(1000));
  t.equal(run(root, Date.now() - 60_000), '', 'nothing from before the run');
});
