import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const SDK = fileURLToPath(new URL('../../sdk/', import.meta.url));
const EXPORT = /^export (?:declare )?(?:async )?(function|const|class|interface|type) (\w+)/;

/** The JSDoc block right above line i, or ''. */
function docAbove(lines: string[], i: number): string {
  let j = i - 1;
  while (j >= 0 && lines[j]!.trim() === '') j--;
  if (j < 0 || !lines[j]!.trim().endsWith('*/')) return '';
  let k = j;
  while (k >= 0 && !lines[k]!.includes('/**')) k--;
  return lines.slice(k, j + 1).join('\n');
}

t.test('every SDK export has JSDoc; functions, classes and values have an example', async (t) => {
  const missing: string[] = [];
  for (const file of readdirSync(SDK).filter((f) => f.endsWith('.ts'))) {
    const lines = readFileSync(join(SDK, file), 'utf8').split('\n');
    lines.forEach((line, i) => {
      const m = EXPORT.exec(line);
      if (!m) return;
      const doc = docAbove(lines, i);
      if (!doc) missing.push(`sdk/${file}:${i + 1} ${m[2]}: no JSDoc`);
      else if (['function', 'const', 'class'].includes(m[1]!) && !doc.includes('@example')) missing.push(`sdk/${file}:${i + 1} ${m[2]}: no @example`);
    });
  }
  t.same(missing, []);
});
