// After a failed `tap` run: print each failed assertion again, with its subtest path and its
// diagnostics, read from the per-file results tap keeps under .tap/test-results. CI shows only the
// end of a long log, so the failures must be at the end. Prints nothing when nothing failed.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = '.tap/test-results';
const since = Number(process.argv[2] ?? 0); // ms since the epoch: only results written after the run began

function* files(dir) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* files(p);
    else if (name.endsWith('.tap') && statSync(p).mtimeMs >= since) yield p;
  }
}

const out = [];
for (const file of files(root)) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const path = []; // subtest names by depth
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const depth = (line.length - line.trimStart().length) / 4;
    const sub = /^\s*# Subtest: (.*)$/.exec(line);
    if (sub) {
      path.length = depth;
      path[depth] = sub[1];
      continue;
    }
    const bad = /^\s*not ok \d+ - (.*)$/.exec(line);
    if (!bad) continue;
    // a failed subtest repeats its children's failures under its own name: report the leaves only
    const isParent = path[depth] === bad[1].replace(/ # time=[\d.]+m?s$/, '');
    if (isParent) continue;
    out.push(`${relative('.', file).replace(/^\.tap\/test-results\//, '').replace(/\.tap$/, '')}: ${[...path.slice(0, depth), bad[1]].join(' > ')}`);
    let j = i + 1;
    if (lines[j]?.trim() === '---') {
      for (; j < lines.length && lines[j].trim() !== '...'; j++) out.push(`  ${lines[j]}`);
      out.push(`  ${lines[j] ?? ''}`);
    }
  }
}
if (out.length) {
  console.log('\n# ---- failed assertions (again, from .tap/test-results) ----');
  for (const l of out) console.log(l.length > 400 ? `${l.slice(0, 400)}…` : l);
}
