import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { detectMechanism } from '../../../../core/process/confine/mechanism.ts';
import { pathRules, ruleArgs, type Lister } from '../../../../core/process/confine/policy.ts';

/*
 * The wrapper grants an --rw, --rd or --wo path only when no link lies on it (openat2's
 * RESOLVE_NO_SYMLINKS): the service resolves the paths it passes, so a folder swapped for a link
 * between that and the child's start (or a link an operator left where a grant points) grants
 * nothing, rather than wherever the link leads. The real path of the same folder is granted.
 */

const mechanism = detectMechanism();
const skip = mechanism.mechanism !== 'landlock' ? 'no Landlock here' : false;

const list: Lister = (dir) => {
  try {
    return readdirSync(dir, { withFileTypes: true }).map((d) => ({ name: d.name, kind: d.isSymbolicLink() ? 'link' : d.isDirectory() ? 'dir' : 'other' }));
  } catch {
    return undefined;
  }
};

/** Runs `script` in the wrapper with `flag` on `path` (and the service's usual reads); what it printed. */
function confined(flag: '--rw' | '--rd' | '--wo', path: string, hidden: string, script: string): string {
  const rules = pathRules({ hidden: [hidden], writable: [] }, list);
  const args = ['--ppid', String(process.pid), ...ruleArgs(rules), flag, path, '--', '/bin/sh', '-c', script];
  const r = spawnSync(mechanism.wrapper!, args, { encoding: 'utf8', timeout: 10_000 });
  return `${r.stdout}${r.stderr}`;
}

t.test('a grant through a link grants nothing; its real path is granted', { skip }, async (t) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'core-links-')));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'real', 'w'), { recursive: true });
  symlinkSync('real', join(dir, 'via'));
  const target = join(dir, 'real', 'w');
  const write = (p: string) => `echo x > ${target}/${p} && echo WROTE || echo REFUSED`;
  t.match(confined('--rw', join(dir, 'via', 'w'), dir, write('a')), /REFUSED/, '--rw through a link on the way: not written');
  t.notOk(existsSync(join(target, 'a')));
  symlinkSync(join(dir, 'real', 'w'), join(dir, 'last'));
  t.match(confined('--rw', join(dir, 'last'), dir, write('b')), /REFUSED/, '--rw whose last part is a link: not written');
  t.match(confined('--wo', join(dir, 'via', 'w'), dir, write('c')), /REFUSED/, '--wo through a link: not written');
  t.match(confined('--rw', target, dir, write('d')), /WROTE/, 'the real path: written');
  t.match(confined('--rd', join(dir, 'via', 'w'), dir, `cat ${target}/d && echo READ || echo REFUSED`), /REFUSED/, '--rd through a link: not read');
  t.match(confined('--rd', target, dir, `cat ${target}/d >/dev/null && echo READ || echo REFUSED`), /READ/, 'the real path: read');
});
