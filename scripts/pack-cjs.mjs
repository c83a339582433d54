// Packs a dependency that ships many small CommonJS files into one file the runtime loads at once
// (issue 46.4): @sinclair/typebox is 247 modules, about 100 ms of every start to resolve, read and
// link one by one, and 20-30 ms as one file. The package's own CommonJS build, unchanged, each file
// wrapped in a function of its own (as Node wraps it) and required through a table of the relative
// paths it names; what else it requires, and its `__dirname`, `require.resolve` and `require.cache`,
// are the installed file's. One ES module and one CommonJS module per entry of the package's
// `exports` give that entry. A package whose code imports dynamically, requires by a computed name
// or asks for its parent module is not packed (the service then loads it as installed).
// core/runtime/packed.ts points the service's imports at the pack while its version is the
// installed one. Plain JavaScript: it runs from scripts/build.mjs, before anything is built.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';

/** Bumped when the pack's layout changes: a pack of another layout is made again. */
export const PACK_LAYOUT = 6;
/** The packages packed, by name: those of more than two files that the service loads at every start and that can be. */
export const PACKED = ['@sinclair/typebox', 'semver', 'fastify', 'tapable', 'avvio', 'find-my-way', 'pino', 'ret', 'pino-std-serializers', 'picomatch', 'thread-stream', 'fast-querystring'];

const LITERAL_REQUIRE = /\brequire\(\s*(['"])([^'"\n]+)\1\s*\)/g;
const ANY_REQUIRE = /\brequire\s*\(/g;
/**
 * What a file wrapped in the pack would see differently: it is refused (the package loads as
 * installed). `__dirname`, `__filename`, `module.filename`, `require.resolve`, `require.cache` and
 * `require.main` are the installed file's; a dynamic import would resolve from the pack's place.
 */
const PLACE_BOUND = /\brequire\.extensions\b|\bmodule\.(parent|children|paths|require|loaded)\b|\bimport\s*\(|\bimport\.meta\b/;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

const isFile = (p) => { try { return statSync(p).isFile(); } catch { return false; } };

/** A relative `require` resolved as Node's CommonJS loader does for files: as named, `.js`, `.json`, `/index.js`. */
function resolveRelative(from, spec) {
  const base = resolve(dirname(from), spec);
  for (const c of [base, `${base}.js`, `${base}.json`, join(base, 'index.js')]) if (isFile(c)) return c;
  throw new Error(`${spec} (required by ${from}) is not a file`);
}

/**
 * Every file of the package reachable from `entries` by relative requires, with the file each
 * relative request names; other requests (built-ins, other packages) stay the runtime's, from the
 * file's own place. A file that imports dynamically, asks for its parent module, or requires by
 * anything but a literal refuses the pack.
 */
function collect(entries) {
  const files = new Map();
  const visit = (file) => {
    if (files.has(file)) return;
    const src = readFileSync(file, 'utf8');
    const deps = {};
    files.set(file, { src, deps });
    if (file.endsWith('.json')) return;
    if (!file.endsWith('.js')) throw new Error(`${file} is neither .js nor .json`);
    // what the code does, not what its comments say (JSDoc's `import("./x").T`): lines that are
    // comments are left out (a line that starts with `*`, `/*` or `//`), nothing else
    const code = src.split('\n').filter((l) => !/^\s*(\*|\/\*|\/\/)/.test(l)).join('\n');
    const bound = PLACE_BOUND.exec(code);
    if (bound) throw new Error(`${file} uses ${bound[0]}`);
    const literal = [...code.matchAll(LITERAL_REQUIRE)];
    if (literal.length !== (code.match(ANY_REQUIRE) ?? []).length) throw new Error(`${file} requires something other than a literal`);
    for (const m of literal) {
      if (!m[2].startsWith('./') && !m[2].startsWith('../')) continue;
      const dep = resolveRelative(file, m[2]);
      deps[m[2]] = dep;
      visit(dep);
    }
  };
  for (const e of entries) visit(e);
  return files;
}

/**
 * The package's entries: `exports` subpath -> the CommonJS file it packs (the `require` condition,
 * else `node`, else the default) and every file a request for it resolves to (the `import`
 * condition's too), or `main` alone.
 */
function entriesOf(pkgDir, pkg) {
  const out = {};
  const exp = typeof pkg.exports === 'string' ? { '.': pkg.exports } : pkg.exports ?? {};
  const pick = (t, first) => (typeof t === 'string' ? t : t && typeof t === 'object' ? pick(t[first] ?? t.node ?? t.default, first) : undefined);
  for (const [sub, target] of Object.entries(exp)) {
    if (!sub.startsWith('.') || sub.includes('*')) continue;
    const file = pick(target, 'require');
    if (typeof file !== 'string' || !file.endsWith('.js')) continue;
    const imported = pick(target, 'import');
    out[sub] = { file: join(pkgDir, file), also: typeof imported === 'string' && imported !== file ? [join(pkgDir, imported)] : [] };
  }
  if (Object.keys(out).length === 0) out['.'] = { file: resolveRelative(join(pkgDir, 'package.json'), `./${pkg.main ?? 'index.js'}`), also: [] };
  return out;
}

/** What the packed files are on disk now (path, size, modification time): a patched file changes it. */
function fingerprint(pkgDir, keys) {
  const h = createHash('sha256');
  for (const k of keys) {
    const st = statSync(join(pkgDir, k));
    h.update(`${k}\t${st.size}\t${st.mtimeMs}\n`);
  }
  return h.digest('hex');
}

function writeAtomic(path, text) {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/** The folder of `name`'s pack under `outRoot`. */
export const packDir = (outRoot, name) => join(outRoot, name.replace(/\//g, '+'));

/**
 * Packs the installed package `name` (under `root`/node_modules) into `packDir(outRoot, name)`:
 * `pack.cjs`, per entry `<n>.mjs` (for import) and `<n>.cjs` (for require), and `manifest.json`
 * (`{ layout, name, version, entries: { subpath: { n, files } }, files, fingerprint }`: an entry's
 * `files` are what a request for it resolves to; `files` and `fingerprint` what was packed),
 * the manifest written last. Throws when the package cannot be packed; an older pack is removed first.
 */
export function packCjs(root, outRoot, name) {
  const pkgDir = join(root, 'node_modules', name);
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  const out = packDir(outRoot, name);
  rmSync(out, { recursive: true, force: true });
  const entries = entriesOf(pkgDir, pkg);
  const files = collect(Object.values(entries).map((e) => e.file));
  const key = (f) => relative(pkgDir, f);
  let code = `"use strict";\n// ${name} ${pkg.version}, packed by scripts/pack-cjs.mjs from its CommonJS build (license: node_modules/${name})\nconst defs = {\n`;
  for (const [f, { src, deps }] of files) {
    const table = Object.fromEntries(Object.entries(deps).map(([spec, dep]) => [spec, key(dep)]));
    const body = f.endsWith('.json') ? `module.exports = ${JSON.stringify(JSON.parse(src))};` : src;
    // in parentheses: V8 compiles the body with the pack (and keeps it in the compile cache), not at its first call
    code += `${JSON.stringify(key(f))}: [${JSON.stringify(table)}, (function (exports, require, module, __filename, __dirname) {\n${body}\n})],\n`;
  }
  // a request the pack does not hold is the runtime's, made from the file's installed place, as
  // are the file's own names for where it is
  code += `};
const { createRequire } = require('node:module');
const { dirname, join, relative } = require('node:path');
const PKG = join(__dirname, ${JSON.stringify(relative(out, pkgDir))});
const loaded = Object.create(null);
function load(file) {
  const hit = loaded[file];
  if (hit) return hit.exports;
  const [deps, body] = defs[file];
  const where = join(PKG, file);
  const module = { exports: {}, filename: where, id: where };
  loaded[file] = module;
  let outside;
  const installed = () => (outside ??= createRequire(where));
  // a relative request the scan did not see still gets the packed file (one instance of each)
  const req = (spec) => {
    if (deps[spec] !== undefined) return load(deps[spec]);
    const outsideReq = installed();
    if (spec.startsWith('.')) {
      const k = relative(PKG, outsideReq.resolve(spec));
      if (defs[k] !== undefined) return load(k);
    }
    return outsideReq(spec);
  };
  req.resolve = (spec, options) => installed().resolve(spec, options);
  Object.defineProperty(req, 'cache', { get: () => installed().cache });
  Object.defineProperty(req, 'main', { get: () => installed().main });
  body.call(module.exports, module.exports, req, module, where, dirname(where));
  return module.exports;
}
module.exports = { load };
`;
  mkdirSync(out, { recursive: true });
  writeAtomic(join(out, 'pack.cjs'), code);
  const real = createRequire(join(pkgDir, 'package.json'));
  const packedKeys = [...files.keys()].map(key);
  const manifest = { layout: PACK_LAYOUT, name, version: pkg.version, entries: {}, files: packedKeys, fingerprint: fingerprint(pkgDir, packedKeys) };
  let n = 0;
  for (const [sub, { file, also }] of Object.entries(entries)) {
    const names = Object.keys(real(file)).filter((k) => IDENTIFIER.test(k) && !['default', '__packed', '__packRequire'].includes(k));
    const wrapper = `import { createRequire as __packRequire } from 'node:module';\n` +
      `const __packed = __packRequire(import.meta.url)('./pack.cjs').load(${JSON.stringify(key(file))});\n` +
      `export const { ${names.join(', ')} } = __packed;\nexport default __packed;\n`;
    const as = `${n++}`;
    writeAtomic(join(out, `${as}.mjs`), wrapper);
    writeAtomic(join(out, `${as}.cjs`), `module.exports = require('./pack.cjs').load(${JSON.stringify(key(file))});\n`);
    manifest.entries[sub] = { n: as, files: [file, ...also].map(key) };
  }
  writeAtomic(join(out, 'manifest.json'), JSON.stringify(manifest));
  return { files: files.size, bytes: code.length, entries: n };
}

/**
 * Whether the pack of `name` is there, of this layout, of the installed version and of the files
 * as they are now (a dependency patched in place, e.g. by patch-package, is packed again).
 */
export function packFresh(root, outRoot, name) {
  try {
    const m = JSON.parse(readFileSync(join(packDir(outRoot, name), 'manifest.json'), 'utf8'));
    const pkgDir = join(root, 'node_modules', name);
    const v = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version;
    return m.layout === PACK_LAYOUT && m.version === v && Array.isArray(m.files) && m.fingerprint === fingerprint(pkgDir, m.files);
  } catch {
    return false;
  }
}

/** Packs what is stale; a package that cannot be packed is reported and left to load as installed. */
export function ensurePacks(root, outRoot = join(root, 'node_modules/.cache/media-core/packed'), names = PACKED) {
  const made = [];
  for (const name of names) {
    if (!existsSync(join(root, 'node_modules', name)) || packFresh(root, outRoot, name)) continue;
    try {
      const r = packCjs(root, outRoot, name);
      made.push(`${name} (${r.files} files)`);
    } catch (e) {
      rmSync(packDir(outRoot, name), { recursive: true, force: true });
      console.error(`pack: ${name} loads as installed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return made;
}
