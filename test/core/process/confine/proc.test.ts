import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { sh } from './helpers.ts';
import { Children } from '../../../../core/process/confine/children.ts';
import { detectMechanism } from '../../../../core/process/confine/mechanism.ts';

/*
 * A child's /proc is its pid namespace's: another child's command line (an HLS output's run
 * credential is on it) and the service's own process are not in it. A probe read a sibling's
 * `/proc/<pid>/cmdline` into a served file and wrote with its credential.
 */
const mechanism = detectMechanism();
const skip = mechanism.mechanism !== 'landlock' ? 'no Landlock here' : !mechanism.ns ? 'no namespaces can be entered here' : false;

t.test('a child sees neither its siblings nor the service in /proc', { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'core-proc-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'disk'));
  const children = new Children({ mechanism, require: true, hidden: [], writable: [join(dir, 'disk')], tmpBase: join(dir, 'tmp') });
  // a sibling whose command line holds a mark, alive while the other looks
  const sibling = sh(children, 'sleep 3; : SECRETMARK-of-the-sibling');
  await new Promise((r) => setTimeout(r, 300));
  const look = await sh(children, `grep -l 'SECRET[M]ARK' /proc/[0-9]*/cmdline; [ -e /proc/${process.pid}/cmdline ] && echo SERVICE-SEEN; ls /proc | grep -c '^[0-9]'; cat /proc/self/status | grep -c '^Pid'`);
  const lines = look.out.trim().split('\n');
  t.notOk(look.out.includes('/cmdline'), `no sibling's command line found (${look.out.trim()})`);
  t.notOk(look.out.includes('SERVICE-SEEN'), 'the service is not in it');
  t.ok(Number(lines.at(-2)) <= 6, `a few processes only: its own (${lines.at(-2)})`);
  t.equal(lines.at(-1), '1', '/proc/self works');
  await sibling;
});
