import t from 'tap';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// issue 45.3: the core, the SDK and the test kit type-check and run their own tests in a copy
// without plugins/ and app/ (scripts/core-alone.ts stages it and runs tsc and tap there)
t.test('core/, sdk/ and testkit/ install and test without plugins/ or app/', async (t) => {
  const script = fileURLToPath(new URL('../../scripts/core-alone.ts', import.meta.url));
  const r = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 200_000, env: { ...process.env, NODE_OPTIONS: '' } });
  const out = `${r.stdout}\n${r.stderr}`;
  t.equal(r.status, 0, out.slice(-3000));
  t.match(out, /core-alone: tsc clean on core\/, sdk\/, testkit\/ and the tests, without plugins\/ or app\//);
  t.match(out, /core-alone: \d+ test files pass without plugins\/ or app\//);
});
