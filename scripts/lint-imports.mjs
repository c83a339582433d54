// Plugins may import only sdk/, their own folder, another plugin's contract (its api.ts, nothing
// else of it) and npm packages (design.md section 6.2); a plugin's api.ts imports only sdk/ (it is
// a contract: refs and types); the vendor examples only their own folder and packages (the SDK by
// its name, a built-in's contract as @media-core/plugins/<name>/api); core/config/ nothing
// of core/kernel/ (the kernel plans a boot from the config, never the reverse); sdk/ nothing of
// core/ (the SDK is the contract the core implements); the test kit (testkit/) the SDK and the core
// by their package names only, as it is installed in a vendor's project.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname, sep } from 'node:path';

// an optional argument names another tree (the lint's own test uses it)
const args = process.argv.slice(2);
const rootArg = args.find((a) => !a.startsWith('--'));
const root = rootArg ? resolve(rootArg) : resolve(dirname(new URL(import.meta.url).pathname), '..');
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
/** True for `plugins/<name>/api.ts`: the one file of a plugin others may import. */
const isContract = (target) => {
  const rel = relative(pluginsDir, target).split(sep);
  return rel.length === 2 && rel[0] !== '..' && (rel[1] === 'api.ts' || rel[1] === 'api.js');
};
let plugins = [];
try { plugins = readdirSync(pluginsDir).filter((d) => statSync(join(pluginsDir, d)).isDirectory()); } catch { /* none */ }
for (const plugin of plugins) {
  const own = join(pluginsDir, plugin);
  for (const file of walk(own)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const target = resolve(dirname(file), m[1]);
      const inSdk = target.startsWith(join(root, 'sdk') + sep) || target === join(root, 'sdk');
      if ((file === join(own, 'api.ts') || file === join(own, 'api.js')) && !inSdk) bad.push(`${relative(root, file)}: imports ${m[1]} (a plugin's api.ts imports only sdk/)`);
      else if (!target.startsWith(own + sep) && !inSdk && !isContract(target)) bad.push(`${relative(root, file)}: imports ${m[1]} (of another plugin only its api.ts)`);
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
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)['"](@media-core\/plugins(?:\/[^'"]*)?)['"]/g)) {
      if (!/^@media-core\/plugins\/[\w-]+\/api$/.test(m[1])) bad.push(`${relative(root, file)}: imports ${m[1]} (of a built-in only @media-core/plugins/<name>/api)`);
    }
  }
}
/** Relative imports of every file under `dir` (a missing folder has none). */
function relativeImports(dir) {
  const out = [];
  let files = [];
  try { files = walk(dir); } catch { /* none */ }
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)['"]([^'"]+)['"]/g)) out.push({ file, spec: m[1] });
  }
  return out;
}
const sdkDir = join(root, 'sdk');
const coreDir = join(root, 'core');
for (const { file, spec } of relativeImports(sdkDir)) {
  const intoCore = spec.startsWith('.') && (resolve(dirname(file), spec) + sep).startsWith(coreDir + sep);
  if (intoCore || spec === '@media-core/core' || spec.startsWith('@media-core/core/') || spec.startsWith('@media-core/testkit')) {
    bad.push(`${relative(root, file)}: imports ${spec} (the SDK imports nothing of the core or the test kit)`);
  }
}
const kitDir = join(root, 'testkit');
for (const { file, spec } of relativeImports(kitDir)) {
  if (spec.startsWith('.') && !resolve(dirname(file), spec).startsWith(kitDir + sep)) {
    bad.push(`${relative(root, file)}: imports ${spec} (use @media-core/core/... or @media-core/sdk)`);
  }
}
for (const { file, spec } of relativeImports(join(root, 'core', 'config'))) {
  if (spec.startsWith('.') && resolve(dirname(file), spec).startsWith(join(root, 'core', 'kernel') + sep)) {
    bad.push(`${relative(root, file)}: imports ${spec} (core/config/ imports nothing of core/kernel/)`);
  }
}
// the core and the SDK name no plugin and not the app that composes them (by path or package name)
const pluginOrApp = (file, spec) => {
  if (spec === '@media-core/app' || spec.startsWith('@media-core/app/') || spec === '@media-core/plugins' || spec.startsWith('@media-core/plugins/')) return true;
  if (!spec.startsWith('.')) return false;
  const target = resolve(dirname(file), spec) + sep;
  return target.startsWith(pluginsDir + sep) || target.startsWith(join(root, 'app') + sep);
};
for (const { file, spec } of [...relativeImports(coreDir), ...relativeImports(sdkDir)]) {
  if (pluginOrApp(file, spec)) bad.push(`${relative(root, file)}: imports ${spec} (core/ and sdk/ import nothing of plugins/ or app/)`);
}
if (bad.length) {
  console.error('Plugins must import only sdk/, their own folder, another plugin\'s api.ts and npm packages; core/config/ not core/kernel/; sdk/ not core/; core/ and sdk/ not plugins/ or app/:\n  ' + bad.join('\n  '));
  process.exit(1);
}
console.log(`import lint: ${plugins.length} plugin folder(s), ${examples.length} example(s), core/ (no plugin, no app), core/config, sdk/ and testkit/ clean`);
