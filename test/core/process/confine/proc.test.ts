import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { sh } from './helpers.ts';
import { waitFor } from '../../../helpers/wait.ts';
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

// the init mounts its /proc and confines itself before it starts the program: a SIGTERM forwarded
// in that window reached only the init, which ignores it, and the program ran on (the engine
// killed it 5 s later); the wrapper now holds forwarded signals until the program is in the group
t.test('a SIGTERM right after the start ends the program', { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'core-term-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const children = new Children({ mechanism, require: true, hidden: [], writable: [dir], tmpBase: join(dir, 'tmp') });
  for (let i = 0; i < 20; i++) {
    const child = children.spawn('sleep', ['30'], { stdio: ['ignore', 'ignore', 'ignore'] });
    const ended = new Promise<string | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
    // at different points of the start (the wrapper's setup, the init's, the program's)
    await new Promise((r) => setTimeout(r, i));
    child.kill('SIGTERM');
    const timer = new Promise<string>((resolve) => { const x = setTimeout(() => resolve('still running after 10 s'), 10_000); ended.then(() => clearTimeout(x)); });
    t.equal(await Promise.race([ended, timer]), 'SIGTERM', `SIGTERM ${i} ms after the start: ended by it`);
  }
});

// the wrapper outside the namespace only waits and forwards signals: a root service's kept every capability
t.test('the wrapper that waits outside holds no capability', { skip: skip || (process.getuid?.() !== 0 && 'not root: it has none anyway') }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'core-caps-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const children = new Children({ mechanism, require: true, hidden: [], writable: [dir], tmpBase: join(dir, 'tmp') });
  const child = children.spawn('sleep', ['5'], { stdio: ['ignore', 'ignore', 'ignore'] });
  t.teardown(() => { child.kill('SIGKILL'); });
  const caps = () => {
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    return ['CapEff', 'CapPrm', 'CapBnd', 'CapAmb'].map((k) => new RegExp(`^${k}:\\s*([0-9a-f]+)$`, 'm').exec(status)?.[1]);
  };
  const seen = await waitFor(() => (caps().every((c) => c !== undefined && /^0+$/.test(c)) ? caps() : undefined), { timeout: 5000, what: `the wrapper's capabilities dropped (${caps().join(' ')})` });
  t.same(seen.map((c) => /^0+$/.test(c!)), [true, true, true, true], 'effective, permitted, bounding and ambient: none');
});
