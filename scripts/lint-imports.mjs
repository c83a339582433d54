// Plugins may import only sdk/, their own folder and npm packages (design.md section 6.2); the
// vendor examples only their own folder and packages (the SDK by its name); core/config/ nothing
// of core/kernel/ (the kernel plans a boot from the config, never the reverse); sdk/ nothing of
// core/ (the SDK is what a vendor installs: it cannot reach into the service). `--strict` drops the
// allow-list of the last rule (sdk/testing/, the test kit, until it is a package of its own).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname, sep } from 'node:path';

// an optional argument names another tree (the lint's own test uses it)
const args = process.argv.slice(2);
const rootArg = args.find((a) => !a.startsWith('--'));
const root = rootArg ? resolve(rootArg) : resolve(dirname(new URL(import.meta.url).pathname), '..');
/** Files under sdk/ still allowed to import core/ (each one a debt; `--strict` allows none). */
const SDK_CORE_ALLOW = args.includes('--strict') ? [] : ['sdk/testing/'];
const pluginsDir = join(root, 'plugins');
const bad = [];
function walk(dir, files = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === 'node_modules') continue;
    if (statSync(p).isDirectory()) walk(p, files);
    else if (/\.(ts|mts|js|mjs)$/.test(name)) files.push(p);
  }
  return files;
}
let plugins = [];
try { plugins = readdirSync(pluginsDir).filter((d) => statSync(join(pluginsDir, d)).isDirectory()); } catch { /* none */ }
for (const plugin of plugins) {
  const own = join(pluginsDir, plugin);
  for (const file of walk(own)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const target = resolve(dirname(file), m[1]);
      const ok = target.startsWith(own + sep) || target.startsWith(join(root, 'sdk') + sep) || target === join(root, 'sdk');
      if (!ok) bad.push(`${relative(root, file)}: imports ${m[1]}`);
    }
    // children start confined through the SDK's childrenRef, never by a plugin's own spawn (issue 26)
    for (const m of text.matchAll(/^\s*import\s+(?!type\b)[^;]*?from\s+['"](?:node:)?child_process['"]/gm)) {
      bad.push(`${relative(root, file)}: imports child_process (start programs through childrenRef)`);
      void m;
    }
  }
}
// a vendor example imports the SDK by package name only: no relative path out of its folder
const examplesDir = join(root, 'examples');
let examples = [];
try { examples = readdirSync(examplesDir).filter((d) => d !== 'node_modules' && statSync(join(examplesDir, d)).isDirectory()); } catch { /* none */ }
for (const ex of examples) {
  const own = join(examplesDir, ex);
  for (const file of walk(own)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
      if (!resolve(dirname(file), m[1]).startsWith(own + sep)) bad.push(`${relative(root, file)}: imports ${m[1]} (use @media-core/sdk)`);
    }
  }
}
/** Relative imports of every file under `dir` (of `root`) that land under `target`. */
function importsInto(dir, target) {
  const out = [];
  let files = [];
  try { files = walk(join(root, dir)); } catch { /* none */ }
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
      if (resolve(dirname(file), m[1]).startsWith(join(root, target) + sep)) out.push({ file: relative(root, file), spec: m[1] });
    }
  }
  return out;
}
for (const { file, spec } of importsInto('core/config', 'core/kernel')) bad.push(`${file}: imports ${spec} (core/config/ imports nothing of core/kernel/)`);
for (const { file, spec } of importsInto('sdk', 'core')) {
  if (!SDK_CORE_ALLOW.some((a) => file.startsWith(a))) bad.push(`${file}: imports ${spec} (sdk/ imports nothing of core/)`);
}
if (bad.length) {
  console.error('Plugins must import only sdk/, their own folder and npm packages; core/config/ not core/kernel/; sdk/ not core/:\n  ' + bad.join('\n  '));
  process.exit(1);
}
console.log(`import lint: ${plugins.length} plugin folder(s), ${examples.length} example(s), core/config and sdk/ clean`);
