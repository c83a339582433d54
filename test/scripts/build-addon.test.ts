import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = join(ROOT, 'test/fixtures/addon');

t.test('the suite itself runs on Node 24 (tap spawns tests with the bundled runtime)', async (t) => {
  t.ok(Number(process.versions.node.split('.')[0]) >= 24, `node ${process.version}`);
});

t.test('scripts/build-addon.sh builds an N-API addon offline against this runtime, and it loads', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'core-addon-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const addon = join(dir, 'addon');
  await cp(FIXTURE, addon, { recursive: true, filter: (src) => !src.includes(`${FIXTURE}/build`) });
  // A fresh HOME: no node-gyp header cache to fall back on; the dist-url in the script is unreachable.
  const home = join(dir, 'home');
  const env = { ...process.env, HOME: home, npm_config_cache: join(home, 'npm') };
  let log = '';
  const child = spawn('bash', [join(ROOT, 'scripts/build-addon.sh'), addon], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (d: Buffer) => { log += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { log += d.toString(); });
  const code = await new Promise((res) => child.on('exit', res));
  t.equal(code, 0, log);
  t.notMatch(log, /download|http:\/\/127\.0\.0\.1:9\/v/i, 'no header download was attempted');
  t.notOk(existsSync(join(home, '.cache', 'node-gyp')), 'no header cache was filled');
  const req = createRequire(import.meta.url);
  const mod = req(join(addon, 'build', 'Release', 'answer.node')) as { answer(): number };
  t.equal(mod.answer(), 42);
});
