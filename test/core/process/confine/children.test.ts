import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { sh } from './helpers.ts';
import { Children } from '../../../../core/process/confine/children.ts';
import { DEFAULT_WRAPPER, detectMechanism } from '../../../../core/process/confine/mechanism.ts';
import { pathRules, ruleArgs } from '../../../../core/process/confine/policy.ts';
import { isApiError } from '../../../../sdk/index.ts';
import { waitFor } from '../../../helpers/wait.ts';

/* The children service and the wrapper under it, with a shell as the child (in-process, no service). */

function place(t: { teardown(fn: () => unknown): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'core-children-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const d of ['disk', 'db', 'outside']) mkdirSync(join(dir, d));
  writeFileSync(join(dir, 'config.json'), 'secret-config\n');
  // an ordinary user could read and write all of these by its permissions: only the sandbox stops it
  for (const p of [dir, join(dir, 'disk'), join(dir, 'db'), join(dir, 'outside')]) chmodSync(p, 0o777);
  chmodSync(join(dir, 'config.json'), 0o666);
  return dir;
}

t.test('a child writes its private folder and the disk root, nothing else; the folder goes with it', async (t) => {
  const dir = place(t);
  const tmpBase = join(dir, 'db', 'run', 'tmp');
  const children = new Children({ mechanism: detectMechanism(), require: true, hidden: [join(dir, 'config.json'), join(dir, 'db')], writable: [join(dir, 'disk')], tmpBase });
  t.equal(children.confinement.mechanism, 'landlock');
  const r = await sh(children, [
    'echo private > "$TMPDIR/f" && cat "$TMPDIR/f"', `echo ok > ${dir}/disk/f && echo disk-ok`,
    `echo no > ${dir}/outside/f || echo outside-refused`, `cat ${dir}/config.json || echo config-refused`,
    'grep CapEff /proc/self/status', `kill -0 ${process.pid} || echo signal-refused`,
  ].join('; '));
  t.match(r.out, /private\ndisk-ok\n/);
  t.match(r.out, /outside-refused/);
  t.match(r.out, /config-refused/);
  t.notMatch(r.out, /secret-config/);
  t.match(r.out, /CapEff:\s+0+\n/, 'no capabilities, even as root');
  t.match(r.out, /signal-refused/, 'cannot signal the service');
  t.notOk(existsSync(join(dir, 'outside', 'f')));
  await waitFor(() => readdirSync(tmpBase).length === 0, { what: 'the private folder removed' });
});

t.test('the wrapper confines an ordinary user the same way', { skip: process.getuid?.() !== 0 && 'needs root to start a child as another user' }, async (t) => {
  const dir = place(t);
  const rules = pathRules({ hidden: [join(dir, 'config.json')], writable: [join(dir, 'disk')] }, (d) => {
    try { return readdirSync(d, { withFileTypes: true }).map((e) => ({ name: e.name, kind: e.isSymbolicLink() ? 'link' as const : e.isDirectory() ? 'dir' as const : 'other' as const })); } catch { return undefined; }
  });
  const script = `id -u; echo ok > ${dir}/disk/u && echo disk-ok; echo no > ${dir}/outside/u || echo outside-refused; cat ${dir}/config.json || echo config-refused`;
  const r = spawnSync(DEFAULT_WRAPPER, ['--ppid', String(process.pid), ...ruleArgs(rules), '--', 'sh', '-c', script], { uid: 65534, gid: 65534, encoding: 'utf8', env: {} });
  t.match(r.stdout, /^65534\ndisk-ok\noutside-refused\nconfig-refused\n/, r.stderr);
  t.notOk(existsSync(join(dir, 'outside', 'u')));
});

t.test('without a mechanism: children run as before, or not at all when confinement is required', async (t) => {
  const dir = place(t);
  const none = detectMechanism('/nonexistent/media-core-confine');
  t.equal(none.mechanism, 'none');
  t.match(none.detail, /NOT confined/);
  const opts = { mechanism: none, hidden: [join(dir, 'config.json')], writable: [join(dir, 'disk')], tmpBase: join(dir, 'db', 'tmp') };
  const r = await sh(new Children({ ...opts, require: false }), `echo yes > ${dir}/outside/f && echo wrote`);
  t.match(r.out, /wrote/, 'unconfined: the write goes through (what the banner warns about)');
  let refused: unknown;
  try { new Children({ ...opts, require: true }).spawn('sh', ['-c', 'true']); } catch (e) { refused = e; }
  t.ok(isApiError(refused) && refused.errorCode === 'PROCESS_UNCONFINED', 'encoder.confinement.require: refused');
});

t.test('the wrapper refuses to run anything when its parent is gone or its arguments are wrong', async (t) => {
  t.equal(spawnSync(DEFAULT_WRAPPER, ['--ppid', '1', '--', 'true']).status, 126, 'not its parent');
  t.equal(spawnSync(DEFAULT_WRAPPER, ['--ppid', String(process.pid), '--bogus', '/', '--', 'true']).status, 126, 'an unknown option');
  const r = spawnSync(DEFAULT_WRAPPER, ['--ppid', String(process.pid), '--ro', '/usr', '--', 'no-such-program-here'], { encoding: 'utf8' });
  t.equal(r.status, 127, 'a missing program');
  t.match(r.stderr, /media-core-confine: exec no-such-program-here/);
  // the probe is what the service asks at start
  t.match(spawnSync(DEFAULT_WRAPPER, ['--probe'], { encoding: 'utf8' }).stdout, /^landlock \d+ ns [01]\n$/);
});
