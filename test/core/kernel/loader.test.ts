import '../../../app/install.ts'; // this service's built-ins, installed into the core
import t from 'tap';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadPlugins } from '../../../core/kernel/loader.ts';
import { startApp } from '../../helpers/app.ts';
import { SDK_VERSION, isBootError } from '../../../sdk/index.ts';

const SDK_URL = new URL('../../../sdk/index.ts', import.meta.url).href;

/** A plain-JS plugin module (TypeScript is not stripped below node_modules, as in a published package). */
function pluginJs(name: string, extra = ''): string {
  return `import { definePlugin, PUBLIC, Type } from ${JSON.stringify(SDK_URL)};
export default definePlugin({ name: ${JSON.stringify(name)}, ${extra}
  setup(ctx) { ctx.http.get('/${name}/hi', { config: PUBLIC }, async () => ({ from: ${JSON.stringify(name)} })); } });
`;
}

/** `<dir>/node_modules/<pkg>` with a package.json and an index.js. */
async function fakePackage(dir: string, pkg: string, json: Record<string, unknown>, code: string): Promise<void> {
  const root = join(dir, 'node_modules', pkg);
  await mkdir(root, { recursive: true });
  await writeFile(join(root, 'package.json'), JSON.stringify({ name: pkg, version: '2.3.4', type: 'module', ...json }));
  await writeFile(join(root, 'index.js'), code);
}

async function bootError(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    if (isBootError(err)) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('loaded without an error');
}

t.test('a plugin package is found from the config folder, with exports and a matching SDK range', async (t) => {
  const dir = t.testdir();
  await fakePackage(dir, '@acme/hello', { exports: { '.': { import: './index.js' } }, peerDependencies: { '@media-core/sdk': '^4.0.0' } }, pluginJs('acme-hello'));
  await fakePackage(dir, 'main-only', { main: 'index.js' }, pluginJs('main-only', "sdkVersion: '>=1 <99',"));
  const loaded = await loadPlugins(['@acme/hello', 'main-only'], [], dir);
  t.same(loaded.map((p) => p.def.name), ['acme-hello', 'main-only']);
  t.equal(SDK_VERSION, '4.0.0');
});

t.test('the service\'s own node_modules is the fallback for package names', async (t) => {
  // a package every install has; it is no plugin, so the error says so (found, then refused)
  const e = await bootError(loadPlugins(['fastify-plugin'], [], t.testdir()));
  t.equal(e.code, 'PLUGIN_NOT_A_PLUGIN');
});

t.test('clear boot errors: missing package, wrong SDK range, duplicate name', async (t) => {
  const dir = t.testdir();
  const missing = await bootError(loadPlugins(['@acme/nothing-here'], [], dir));
  t.equal(missing.code, 'PLUGIN_NOT_FOUND');
  t.match(missing.message, /Unknown plugin '@acme\/nothing-here' in 'plugins\[0\]'; known plugins: .*\(no package '@acme\/nothing-here' in /);

  await fakePackage(dir, 'too-new', { peerDependencies: { '@media-core/sdk': '^5.0.0' } }, pluginJs('too-new'));
  const range = await bootError(loadPlugins(['too-new'], [], dir));
  t.equal(range.code, 'PLUGIN_SDK_RANGE');
  t.match(range.message, /Plugin 'too-new' \(package too-new@2\.3\.4 .*\) needs SDK @media-core\/sdk@\^5\.0\.0; this service has SDK 4\.0\.0/);

  await fakePackage(dir, 'def-range', {}, pluginJs('def-range', "sdkVersion: '~0.9.0',"));
  t.equal((await bootError(loadPlugins(['def-range'], [], dir))).code, 'PLUGIN_SDK_RANGE', 'the definition\'s sdkVersion is checked too');
  await fakePackage(dir, 'bad-range', { peerDependencies: { '@media-core/sdk': 'latest please' } }, pluginJs('bad-range'));
  t.match((await bootError(loadPlugins(['bad-range'], [], dir))).message, /declares SDK range 'latest please', which is not a semver range/);

  await writeFile(join(dir, 'twin.mjs'), pluginJs('memfs'));
  const dup = await bootError(loadPlugins(['memfs', './twin.mjs'], [], dir));
  t.equal(dup.code, 'PLUGIN_DUPLICATE');
  t.match(dup.message, /Two plugins are named 'memfs': built-in 'memfs' and .*twin\.mjs \(plugins\[1\]\)/);
  t.equal((await bootError(loadPlugins(['./twin.mjs'], ['memfs'], dir))).code, 'PLUGIN_DUPLICATE', 'a required plugin\'s name is taken too');
  // the same module twice is one plugin, not a duplicate
  t.same((await loadPlugins(['*', 'memfs'], [], dir)).filter((p) => p.def.name === 'memfs').length, 1);
});

t.test('paths are resolved against the config file\'s folder, not the working directory', async (t) => {
  const dir = t.testdir({ disk: {}, plugins: {} });
  await writeFile(join(dir, 'plugins', 'local.mjs'), pluginJs('local'));
  await fakePackage(dir, 'by-name', {}, pluginJs('by-name'));
  await writeFile(join(dir, 'config.json'), JSON.stringify({
    address: '127.0.0.1:0', db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } }, update_check: false,
    plugins: ['./plugins/local.mjs', 'by-name'],
  }));
  t.not(process.cwd(), dir);
  const app = await startApp(t, { dir });
  t.same((await app.request('GET', '/local/hi')).body, { from: 'local' });
  t.same((await app.request('GET', '/by-name/hi')).body, { from: 'by-name' });
});

t.test('a package plugin\'s settings are validated with the rest: at boot and on PUT /api/v3/config', async (t) => {
  const dir = t.testdir({ disk: {} });
  await fakePackage(dir, 'tuned', {}, pluginJs('tuned', 'configSchema: Type.Object({ level: Type.Integer({ minimum: 1, default: 1 }) }),'));
  await writeFile(join(dir, 'config.json'), JSON.stringify({
    address: '127.0.0.1:0', db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } }, update_check: false,
    plugins: [{ name: 'tuned', config: { level: 2 } }],
  }));
  const app = await startApp(t, { dir });
  t.same((await app.request('GET', '/tuned/hi')).body, { from: 'tuned' });
  const bad = await app.request('PUT', '/api/v3/config', { body: { plugins: [{ name: 'tuned', config: { level: 0 } }] } });
  t.equal(bad.status, 409, 'found from the config file\'s folder, then refused by its schema');
  t.match(JSON.stringify(bad.body), /plugins\[0\]\.config\.level/);
  // which code runs is the operator's (issue 26): another list is refused before anything is looked up
  const missing = await app.request('PUT', '/api/v3/config', { body: { plugins: ['not-installed-here'] } });
  t.equal(missing.status, 400);
  t.match(missing.body.details[0], /^plugins: can only be set in the config file or the environment/);
});
