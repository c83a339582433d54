import t from 'tap';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, vendorEnv, warm, warmKey } from '../../scripts/testkit-vendor.ts';

const SCRIPT = join(ROOT, 'scripts', 'testkit-vendor.ts');

function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT, ...args], { cwd: ROOT, env, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, out: `${stdout}${stderr}` });
    });
  });
}

t.test('the vendor\'s npm and tap get no variable of a parent npm or tap, but the cache and registry', async (t) => {
  const saved = { ...process.env };
  t.teardown(() => { process.env = saved; });
  Object.assign(process.env, {
    npm_config_local_prefix: ROOT, npm_package_name: 'media-process-core', npm_config_cache: '/somewhere/npm-cache',
    npm_config_registry: 'http://127.0.0.1:9/', TAP_CHILD_ID: '3', _TAPJS_PROCESSINFO_EXTERNAL_ID_: 'x', NODE_OPTIONS: '--import=x',
  });
  const env = vendorEnv();
  for (const k of ['npm_config_local_prefix', 'npm_package_name', 'TAP_CHILD_ID', '_TAPJS_PROCESSINFO_EXTERNAL_ID_', 'NODE_OPTIONS']) t.notOk(k in env, `${k} dropped`);
  t.equal(env.npm_config_cache, '/somewhere/npm-cache');
  t.equal(env.npm_config_registry, 'http://127.0.0.1:9/');
  t.equal(env._TAPJS_PROCESSINFO_COVERAGE_, '0', 'the vendor\'s processes are not profiled for this repository');
  t.equal(env.PATH, process.env.PATH);
});

t.test('warm installs once per lock, marks it in the cache, and forgets older marks', async (t) => {
  const cache = t.testdir({ '_media-core': { 'testkit-vendor-0000000000000000': '' } });
  const installs: string[] = [];
  const install = async (dir: string) => { installs.push(dir); t.ok(existsSync(dir), 'into a temp folder'); };
  t.equal(await warm({ cache, install }), true, 'a cache without the current mark is filled');
  t.equal(installs.length, 1);
  t.notOk(existsSync(installs[0]!), 'the temp folder is removed');
  t.same(readdirSync(join(cache, '_media-core')), [`testkit-vendor-${warmKey()}`], 'only the current mark is left');
  t.equal(await warm({ cache, install }), false, 'then nothing to do');
  t.equal(installs.length, 1);

  const cold = join(cache, 'cold');
  await t.rejects(warm({ cache: cold, install: async () => { throw new Error('offline'); } }), /offline/);
  t.notOk(existsSync(join(cold, '_media-core')), 'a failed install leaves no mark');
});

t.test('the command line: usage, and --warm with a filled cache does nothing', async (t) => {
  const usage = await cli([], vendorEnv());
  t.equal(usage.code, 2);
  t.match(usage.out, /usage: node scripts\/testkit-vendor\.ts DIR \| --warm/);
  const cache = t.testdir({ '_media-core': { [`testkit-vendor-${warmKey()}`]: '' } });
  const r = await cli(['--warm'], { ...vendorEnv(), npm_config_cache: cache });
  t.equal(r.code, 0, r.out);
  t.equal(r.out, '', 'already filled: silent');
});
