import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { packCjs, packFresh, ensurePacks } from '../../../scripts/pack-cjs.mjs';
import { packedUrls } from '../../../core/runtime/packed.ts';
import type { TestLike } from '../../helpers/app.ts';

/*
 * Dependencies of many small CommonJS files load as one (issue 46.4): scripts/pack-cjs.mjs packs a
 * package's own files, each wrapped as Node wraps it, its other requests left to the runtime from
 * the file's installed place (its `__dirname` and `require.resolve` too); a package whose code
 * imports dynamically (or requires by a computed name) is not packed. core/runtime/packed.ts points only what resolves to the installed entry at
 * the pack, and only while the pack's version is the installed one. The hook is tried in a
 * process of its own (it changes that thread's resolution for good).
 */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

async function fixtureRoot(t: TestLike): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'core-pack-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const pkg = async (name: string, files: Record<string, string>) => {
    for (const [f, text] of Object.entries(files)) {
      await mkdir(join(root, 'node_modules', name, f, '..'), { recursive: true });
      await writeFile(join(root, 'node_modules', name, f), text);
    }
  };
  await pkg('many', {
    'package.json': JSON.stringify({ name: 'many', version: '1.2.3', main: 'lib/index.js' }),
    'lib/index.js': "'use strict';\n/** @typedef {import('./x').T} T */\nconst { twice } = require('./twice');\nconst data = require('../data.json');\nconst { sep } = require('node:path');\nconst other = require('other');\nexports.twice = twice;\nexports.data = data;\nexports.sep = sep;\nexports.other = other.name;\nexports.self = this === module.exports;\n" +
      // a request on a line the scan takes for a comment: still the packed file, the one instance
      "const again = 1\n  * 0 || require('./twice/index.js');\nexports.same = again === require('./twice');\n",
    'lib/twice/index.js': "module.exports.twice = (n) => n * 2;\n",
    'data.json': '{"k": [1, 2]}',
  });
  // a dependency of `many` nested in its own folder: the pack's bare require finds it from there
  await pkg('many/node_modules/other', { 'package.json': JSON.stringify({ name: 'other', version: '9.0.0', main: 'i.js' }), 'i.js': "exports.name = 'nested other';\n" });
  await pkg('where', { 'package.json': JSON.stringify({ name: 'where', version: '1.0.0' }), 'index.js': "module.exports = { dir: __dirname, resolved: require.resolve('./index.js') };\n" });
  await pkg('dynamic', { 'package.json': JSON.stringify({ name: 'dynamic', version: '1.0.0' }), 'index.js': "module.exports = () => import('./x.js');\n" });
  await pkg('computed', { 'package.json': JSON.stringify({ name: 'computed', version: '1.0.0' }), 'index.js': "const n = './a';\nmodule.exports = require(n);\n" });
  await symlink(join(ROOT, 'node_modules/@sinclair'), join(root, 'node_modules/@sinclair'));
  return root;
}

t.test('a package of many files packs into one that behaves as installed; one that imports dynamically does not pack', async (t) => {
  const root = await fixtureRoot(t);
  const out = join(root, 'packs');
  t.match(packCjs(root, out, 'many'), { files: 3, entries: 1 });
  const m = JSON.parse(readFileSync(join(out, 'many/manifest.json'), 'utf8'));
  t.match(m, { name: 'many', version: '1.2.3', entries: { '.': { n: '0', files: ['lib/index.js'] } } });
  const esm = await import(pathToFileURL(join(out, 'many/0.mjs')).href);
  t.same({ twice: esm.twice(4), data: esm.data, sep: esm.sep, other: esm.other, self: esm.self, same: esm.same }, { twice: 8, data: { k: [1, 2] }, sep: '/', other: 'nested other', self: true, same: true },
    'relative files, JSON, built-ins, a nested dependency found from the installed place, `this` as exports');
  packCjs(root, out, 'where');
  const where = await import(pathToFileURL(join(out, 'where/0.mjs')).href);
  const installed = join(root, 'node_modules/where');
  t.same(where.default, { dir: installed, resolved: join(installed, 'index.js') }, '__dirname and require.resolve: the installed place');
  t.throws(() => packCjs(root, out, 'dynamic'), /uses import\(/, 'a dynamic import would resolve from the pack');
  t.throws(() => packCjs(root, out, 'computed'), /other than a literal/);
  t.ok(packFresh(root, out, 'many'));
  const twice = join(root, 'node_modules/many/lib/twice/index.js');
  await writeFile(twice, "module.exports.twice = (n) => n * 20;\n");
  await utimes(twice, new Date(), new Date(Date.now() + 5000));
  t.notOk(packFresh(root, out, 'many'), 'a file patched in place: stale');
  packCjs(root, out, 'many');
  t.ok(packFresh(root, out, 'many'), 'packed again');
  await writeFile(join(root, 'node_modules/many/package.json'), JSON.stringify({ name: 'many', version: '1.2.4', main: 'lib/index.js' }));
  t.notOk(packFresh(root, out, 'many'), 'another version installed: stale');
  t.same([...new Set([...packedUrls(root, out).values()].map((e) => e.name))], ['where'], 'and not used');
});

t.test('typebox from its pack: the same names as its ES build, one format registry for every entry', async (t) => {
  const root = await fixtureRoot(t);
  const out = join(root, 'packs');
  packCjs(root, out, '@sinclair/typebox');
  const urls = packedUrls(root, out);
  const real = pathToFileURL(join(ROOT, 'node_modules/@sinclair/typebox/build/esm/index.mjs')).href;
  t.ok(urls.has(real), 'the ES entry stands for the pack as well as the CommonJS one');
  const packed = await import(urls.get(real)!.esm);
  const installed = await import('@sinclair/typebox');
  t.same(Object.keys(packed).filter((k) => k !== 'default').sort(), Object.keys(installed).sort());
  const value = await import(urls.get(pathToFileURL(join(ROOT, 'node_modules/@sinclair/typebox/build/esm/value/index.mjs')).href)!.esm);
  packed.FormatRegistry.Set('pack-test', (v: string) => v === 'yes');
  t.same([value.Value.Check(packed.Type.String({ format: 'pack-test' }), 'yes'), value.Value.Check(packed.Type.String({ format: 'pack-test' }), 'no')], [true, false]);
});

t.test('the hook points what resolves to a packed entry at its pack, imports and requires alike', async (t) => {
  const root = await fixtureRoot(t);
  const out = join(root, 'packs');
  ensurePacks(root, out, ['many', 'dynamic']);
  t.ok(existsSync(join(out, 'many/manifest.json')) && !existsSync(join(out, 'dynamic')), 'ensurePacks: what can be packed');
  const probe = [
    `import { usePacks, packedPackages } from ${JSON.stringify(pathToFileURL(join(ROOT, 'core/runtime/packed.ts')).href)};`,
    "import { createRequire } from 'node:module';",
    `usePacks(${JSON.stringify(root)}, ${JSON.stringify(out)});`,
    `const req = createRequire(${JSON.stringify(join(root, 'x.js'))});`,
    `const nested = createRequire(${JSON.stringify(join(root, 'node_modules/many/lib/index.js'))});`,
    'console.log(JSON.stringify({ packed: packedPackages(), many: req.resolve("many"), other: nested.resolve("other"), twice: req("many").twice(3) }));',
  ].join('\n');
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { encoding: 'utf8', cwd: root });
  t.equal(r.status, 0, r.stderr);
  const seen = JSON.parse(r.stdout);
  t.same(seen.packed.sort(), ['many']);
  t.equal(seen.many, join(out, 'many/0.cjs'), 'a require gets the CommonJS face of the pack');
  t.equal(seen.other, join(root, 'node_modules/many/node_modules/other/i.js'), 'an unpacked package as installed');
  t.equal(seen.twice, 6);
});
