// Builds the service's TypeScript (app/, core/, sdk/, plugins/, and testkit/ that is packed with them) to plain
// JavaScript next to each source, with a source map, so the running service loads no type stripper or
// compiler (issue 29), and the packed packages run under a vendor's node_modules (no stripping there).
// Only what changed is rebuilt (a .js older than its .ts); a .js whose .ts is gone is removed.
// Plain JavaScript on purpose: it runs before anything is built. `--check` only reports (exit 1 when stale).
import { readdirSync, statSync, readFileSync, writeFileSync, renameSync, rmSync, existsSync } from 'node:fs';
import { join, dirname, basename, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensurePacks } from './pack-cjs.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const TREES = ['app', 'core', 'sdk', 'plugins', 'testkit'];
/** Folders that hold no service code: tests run from sources, addons and packages are not ours to build. */
const SKIP_DIRS = new Set(['node_modules', 'test', 'addon', 'build', 'fixtures']);

/** A relative TypeScript module named by `from`, a side-effect `import` or a literal `import()`. */
const TS_SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"\n]*?)\.ts\2/g;

function isSource(name) {
  return name.endsWith('.ts') && !name.endsWith('.d.ts') && !name.endsWith('.test.ts');
}

function walk(dir, out) {
  let entries;
  try { entries = readdirSync(dir, { withFileTypes: true }); } catch { return; }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) { if (!SKIP_DIRS.has(e.name) && !e.name.startsWith('.')) walk(p, out); continue; }
    if (e.isFile()) out.push(p);
  }
}

function mtime(p) {
  try { return statSync(p).mtimeMs; } catch { return -1; }
}

/** Sources whose .js is missing or older, and built files whose source is gone. */
export function plan(root = ROOT) {
  const files = [];
  for (const t of TREES) walk(join(root, t), files);
  const stale = [];
  const orphans = [];
  for (const f of files) {
    if (isSource(f)) {
      const js = f.slice(0, -3) + '.js';
      if (mtime(js) < mtime(f) || !existsSync(js + '.map')) stale.push(f);
    } else if (f.endsWith('.js.map')) {
      const js = f.slice(0, -4);
      if (!existsSync(js.slice(0, -3) + '.ts')) orphans.push(js);
    }
  }
  return { stale, orphans };
}

function writeAtomic(path, text) {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/**
 * A map from each line of the .js to the same line of the .ts: type stripping keeps every line and
 * column, so `--enable-source-maps` only has to swap the file name.
 */
function identityMap(jsName, tsName, lines) {
  return JSON.stringify({ version: 3, file: jsName, sources: [tsName], names: [], mappings: lines > 0 ? 'AAAA' + ';AACA'.repeat(lines - 1) : '' });
}

export async function build(root = ROOT) {
  const { stale, orphans } = plan(root);
  for (const js of orphans) { rmSync(js, { force: true }); rmSync(js + '.map', { force: true }); }
  if (stale.length === 0) return { built: 0, removed: orphans.length };
  // Node's own type stripper, at build time only: types become blanks, so every line and column stays
  const { stripTypeScriptTypes } = await import('node:module');
  for (const f of stale) {
    let text;
    try {
      text = stripTypeScriptTypes(readFileSync(f, 'utf8'), { mode: 'strip' }).replace(TS_SPECIFIER, '$1$2$3.js$2');
    } catch (e) {
      throw new Error(`${relative(root, f)}: ${e instanceof Error ? e.message : String(e)}`);
    }
    const js = f.slice(0, -3) + '.js';
    const lines = text.split('\n').length;
    // the map first: a .js is only fresh with its map next to it
    writeAtomic(js + '.map', identityMap(basename(js), basename(f), lines));
    writeAtomic(js, `${text}${text.endsWith('\n') ? '' : '\n'}//# sourceMappingURL=${basename(js)}.map\n`);
  }
  return { built: stale.length, removed: orphans.length };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // `--root DIR` builds another tree (the build's own test uses it)
  const at = process.argv.indexOf('--root');
  const root = at > 0 && process.argv[at + 1] ? process.argv[at + 1] : ROOT;
  if (process.argv.includes('--check')) {
    const { stale, orphans } = plan(root);
    for (const f of stale) console.log(`stale: ${relative(root, f)}`);
    for (const f of orphans) console.log(`orphan: ${relative(root, f)}`);
    process.exit(stale.length + orphans.length ? 1 : 0);
  }
  process.removeAllListeners('warning'); // the stripper is marked experimental; it is the runtime's own
  const t0 = performance.now();
  const r = await build(root);
  // dependencies of many small files, packed into one each (core/runtime/packed.ts loads them)
  const packs = ensurePacks(root);
  if (packs.length) console.error(`build: packed ${packs.join(', ')} in ${Math.round(performance.now() - t0)} ms`);
  if (r.built || r.removed) {
    // the service's compile cache (core/runtime/compile-cache.ts) keeps an entry per source text it
    // saw: emptied when the code changed, so it holds the current build only (the next start fills it)
    rmSync(join(root, 'node_modules/.cache/media-core/compiled'), { recursive: true, force: true });
    console.error(`build: ${r.built} file(s) compiled to JavaScript, ${r.removed} removed, in ${Math.round(performance.now() - t0)} ms`);
  }
}
