import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILTINS } from '../../app/built-ins.ts';
import { BEGIN, END, README, rows, table, withTable } from '../../scripts/where-table.ts';

/*
 * Issue 44.7: the README's "Where things are" table is generated from the build's plugin table
 * (app/built-ins.ts) and each README's `<!-- where: ... -->` line, so no plugin can be
 * missing from it (it omitted webrtc, recordings, s3-fs and core/streams).
 */

t.test('the where table in README.md is up to date and names every built-in plugin', async (t) => {
  const doc = readFileSync(README, 'utf8');
  t.ok(doc.includes(`${BEGIN}\n${table()}${END}`), 'regenerate with: node scripts/where-table.ts');
  t.equal(withTable(doc), doc);
  const paths = rows().map(([p]) => p);
  for (const { def } of BUILTINS) t.ok(paths.includes(`plugins/${def.name}/`), `plugins/${def.name}/ has its row`);
  for (const core of ['core/streams/', 'core/process/', 'core/http/']) t.ok(paths.includes(core), `${core} has its row`);
  t.throws(() => withTable('no markers'), /markers/);
});

t.test('a built-in whose README has no where line stops the table, naming it', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'where-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'core'));
  mkdirSync(join(root, 'plugins'));
  t.throws(() => rows(root), new RegExp(`plugins/${BUILTINS[0]!.def.name}/README.md`));
});
