/**
 * A vendor's project outside this repository, installed from packed tarballs: the SDK, the core,
 * the built-in plugins, the app that composes them and the test kit (`npm pack`), with the HTTP-TS example plugin copied in as
 * the vendor's own code and tap as its test runner. Used by test/testkit/vendor-install.test.ts,
 * and by scripts/ensure-test-deps.sh to fill the npm cache once (`--warm`), so that the test's
 * `npm install --prefer-offline` needs no network.
 *
 *   node scripts/testkit-vendor.ts DIR     packs into DIR/packs and installs DIR/vendor
 *   node scripts/testkit-vendor.ts --warm  the same in a temp folder, once per package-lock.json
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EXAMPLE = join(ROOT, 'examples', 'http-ts-ingest');
/** Folders of the built-ins that are no package content: native builds, installs, tests. */
const SKIP = new Set(['node_modules', 'build', 'test', 'fixtures']);

/**
 * The environment for the vendor's npm and tap: a parent npm's (`npm test`, `npx tap`) variables
 * would point the child at this repository (npm_config_local_prefix), a parent tap's at its runner.
 */
export function vendorEnv(): NodeJS.ProcessEnv {
  const keep = new Set(['npm_config_cache', 'npm_config_registry', 'npm_config_userconfig']);
  const drop = (k: string) => (/^(npm_|tap|_tapjs)/i.test(k) && !keep.has(k.toLowerCase())) || k === 'NODE_OPTIONS' || k === 'NODE_V8_COVERAGE';
  // under a covered tap run, the vendor's processes are not this repository's coverage
  return { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !drop(k))), _TAPJS_PROCESSINFO_COVERAGE_: '0' };
}

function npm(cwd: string, args: string[]): string {
  return execFileSync('npm', args, { cwd, env: vendorEnv(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

const rootPackage = () => JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
/** The version of a package this repository's lock installs (so the vendor's comes from the same cache). */
const lockedVersion = (name: string) => (JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version: string }>;
}).packages[`node_modules/${name}`]!.version;

/**
 * The built-ins (plugins/) as `@media-core/plugins`: the app (`@media-core/app`) finds them at
 * `../plugins` from its own folder, so beside it in the vendor's node_modules (as in this repository).
 * Not a workspace: plugins/ holds workspaces of its own (rtmp, srt, cluster).
 */
function stagePlugins(into: string): string {
  const dir = join(into, 'plugins');
  cpSync(join(ROOT, 'plugins'), dir, {
    recursive: true,
    filter: (src) => !relative(ROOT, src).split(sep).some((part) => SKIP.has(part) || part === 'addon'),
  });
  const root = rootPackage();
  const sdk = JSON.parse(readFileSync(join(ROOT, 'sdk', 'package.json'), 'utf8')) as { version: string };
  const deps = Object.fromEntries(['graphql', 'jose', 'mercurius'].map((n) => [n, root.dependencies[n]!]));
  // plugins/package.json names the package and its exports (each plugin's contract, its api entry)
  const own = JSON.parse(readFileSync(join(ROOT, 'plugins', 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({
    ...own,
    version: root.version,
    files: ['**/*.js', '**/*.js.map', '**/*.ts', '!**/*.d.ts', '**/package.json'],
    dependencies: { '@media-core/sdk': `>=${sdk.version}`, ...deps },
  }, null, 2));
  return dir;
}

/** Packs sdk/, core/, the built-ins, app/ and testkit/ into `dest`; the tarballs' paths. */
export function packAll(dest: string): string[] {
  // the packages ship the JavaScript beside each .ts (only what changed is built)
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: ['ignore', 'ignore', 'inherit'] });
  mkdirSync(dest, { recursive: true });
  const stage = mkdtempSync(join(tmpdir(), 'testkit-stage-'));
  try {
    const folders = [join(ROOT, 'sdk'), join(ROOT, 'core'), stagePlugins(stage), join(ROOT, 'app'), join(ROOT, 'testkit')];
    const out = npm(stage, ['pack', '--json', '--pack-destination', dest, ...folders]);
    return (JSON.parse(out) as { filename: string }[]).map((p) => join(dest, p.filename));
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/**
 * DIR/vendor: the example plugin's files (no node_modules), the tarballs and tap installed as its
 * dev dependencies from the npm cache (the network only for what the cache lacks).
 */
export async function vendorProject(dir: string): Promise<string> {
  if (!relative(ROOT, dir).startsWith('..')) throw new Error(`${dir} is inside the repository`);
  const tarballs = packAll(join(dir, 'packs'));
  const vendor = join(dir, 'vendor');
  cpSync(EXAMPLE, vendor, { recursive: true, filter: (src) => basename(src) !== 'node_modules' });
  npm(vendor, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--save-dev', ...tarballs, `tap@${lockedVersion('tap')}`]);
  return vendor;
}

/** What the warm-up remembers: the lock and the packed packages' manifests. */
export function warmKey(): string {
  const h = createHash('sha256');
  for (const f of ['package-lock.json', 'sdk/package.json', 'core/package.json', 'app/package.json', 'testkit/package.json', 'plugins/package.json']) h.update(readFileSync(join(ROOT, f)));
  return h.digest('hex').slice(0, 16);
}

/**
 * Fills the npm cache with everything the vendor install needs, once: the mark lives in the cache
 * folder itself, so an emptied cache is filled again. `cache` and `install` are for its test.
 */
export async function warm(opts: { cache?: string; install?: (dir: string) => Promise<unknown> } = {}): Promise<boolean> {
  const cache = opts.cache ?? npm(ROOT, ['config', 'get', 'cache']).trim();
  const marks = join(cache, '_media-core');
  const mark = join(marks, `testkit-vendor-${warmKey()}`);
  if (existsSync(mark)) return false;
  const dir = mkdtempSync(join(tmpdir(), 'testkit-warm-'));
  try {
    await (opts.install ?? vendorProject)(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  mkdirSync(marks, { recursive: true });
  for (const old of readdirSync(marks)) rmSync(join(marks, old), { force: true });
  writeFileSync(mark, `${new Date().toISOString()}\n`);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const t0 = performance.now();
  if (process.argv[2] === '--warm') {
    if (await warm()) console.error(`npm cache filled for the test kit's vendor install in ${Math.round(performance.now() - t0)} ms`);
  } else if (process.argv[2]) {
    console.log(await vendorProject(process.argv[2]));
  } else {
    console.error('usage: node scripts/testkit-vendor.ts DIR | --warm');
    process.exit(2);
  }
}
