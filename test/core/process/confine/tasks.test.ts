import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { sh } from './helpers.ts';
import { Children } from '../../../../core/process/confine/children.ts';
import { detectMechanism } from '../../../../core/process/confine/mechanism.ts';
import { pidsFolder, TaskCgroups } from '../../../../core/process/confine/tasks.ts';
import { waitFor } from '../../../helpers/wait.ts';

/*
 * `encoder.confinement.max_tasks`: a child (all it starts, threads included) holds at most that many
 * tasks, kept by a pids cgroup of its own: run as root, `-threads 100000` made 13,274 threads in
 * 10 s. Its cgroup goes when it exits.
 */

t.test('where the pids cgroup is: v1\'s hierarchy, v2\'s unified one, none', async (t) => {
  const have = (...paths: string[]) => (p: string) => paths.includes(p);
  t.same(pidsFolder('8:pids:/svc\n0::/\n', '/cg', have('/cg/pids/svc/cgroup.procs')), { dir: '/cg/pids/svc', v2: false });
  t.same(pidsFolder('8:pids:/svc\n', '/cg', have('/cg/pids/cgroup.procs')), { dir: '/cg/pids', v2: false }, 'a container: its cgroup at the mount');
  t.same(pidsFolder('0::/system.slice/x.service\n', '/cg', have('/cg/system.slice/x.service/cgroup.controllers')), { dir: '/cg/system.slice/x.service', v2: true });
  t.same(pidsFolder('0::/\n', '/cg', have('/cg/cgroup.controllers')), { dir: '/cg', v2: true });
  t.match(pidsFolder('', '/cg', have()), { reason: /no cgroup/ });
  t.match(pidsFolder('8:pids:/svc\n', '/cg', have()), { reason: /no pids hierarchy/ });
});

const mechanism = detectMechanism();
const probe = TaskCgroups.open(16);
const skip = mechanism.mechanism !== 'landlock' ? 'no Landlock here' : 'reason' in probe ? `no pids cgroup here: ${probe.reason}` : false;
// forks until one fails (dash then stops with "Cannot fork"), printing how many it made; 60 at most
const FORKS = 'i=0; while [ $i -lt 60 ]; do sleep 2 & i=$((i+1)); echo $i; done';
const made = (out: string) => Math.max(0, ...out.split('\n').map(Number).filter(Number.isFinite));

t.test('a child makes at most max_tasks threads and processes; its cgroup goes with it', { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'core-tasks-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'disk'));
  const warned: string[] = [];
  const bounded = new Children({ mechanism, require: true, hidden: [], writable: [join(dir, 'disk')], tmpBase: join(dir, 'tmp'), maxTasks: 16, warn: (m) => warned.push(m) });
  const r = await sh(bounded, FORKS);
  t.ok(made(r.out) >= 5 && made(r.out) < 16, `forks stop below the bound (${made(r.out)})`);
  t.match(r.out, /Cannot fork/, 'the fork beyond failed');
  t.same(warned, []);
  const where = pidsFolder(await import('node:fs').then((fs) => fs.readFileSync('/proc/self/cgroup', 'utf8')));
  const mine = () => ('dir' in where ? readdirSync(where.dir).filter((n) => n.startsWith(`media-core-${process.pid}-`)) : []);
  await waitFor(() => mine().length === 0 || undefined, { timeout: 10_000, what: 'the child\'s cgroup removed once its tasks ended' });

  const open = new Children({ mechanism, require: true, hidden: [], writable: [join(dir, 'disk')], tmpBase: join(dir, 'tmp2'), maxTasks: 0 });
  t.equal(made((await sh(open, FORKS)).out), 60, 'max_tasks 0: no bound');
  // the service's own hosts (the SRT host's threads follow its publishers) ask for none
  const host = await new Promise<string>((resolve) => {
    const child = bounded.spawn('sh', ['-c', FORKS], { stdio: ['ignore', 'pipe', 'ignore'], maxTasks: 0 });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
    child.on('close', () => resolve(out));
  });
  t.equal(made(host), 60, 'a spawn with maxTasks 0 is not bounded');
  t.ok(existsSync(join(dir, 'disk')));
});

t.test('the service keeps encoder.confinement.max_tasks: ffmpeg asked for 3,000 filter threads gets the bound', { skip }, async (t) => {
  const { startApp } = await import('../../../helpers/app.ts');
  const { readFileSync } = await import('node:fs');
  const app = await startApp(t, { config: { encoder: { confinement: { max_tasks: 64 } } } });
  const mark = `tasks-mark-${process.pid}-${Date.now()}`;
  const body = {
    id: 'threads', reconnect: false,
    input: [{ id: 'in', address: 'testsrc2=size=320x240:rate=25', options: ['-re', '-f', 'lavfi', '-t', '20'] }],
    output: [{ id: 'out', address: '-', options: ['-filter_threads', '3000', '-vf', 'scale=160:120', '-metadata', `title=${mark}`, '-f', 'null'] }],
  };
  t.equal((await app.request('POST', '/api/v3/process', { body })).status, 200);
  const pid = await waitFor(() => readdirSync('/proc').filter((p) => /^\d+$/.test(p)).find((p) => {
    try { return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(mark) && readFileSync(`/proc/${p}/comm`, 'utf8').startsWith('ffmpeg'); } catch { return false; }
  }), { timeout: 15_000, what: 'the ffmpeg of the process' });
  // its filter threads are made as the graph starts: the most it holds over a second
  let most = 0;
  for (let i = 0; i < 10; i++) {
    try { most = Math.max(most, readdirSync(`/proc/${pid}/task`).length); } catch { break; }
    await new Promise((r) => setTimeout(r, 100));
  }
  t.ok(most > 1 && most <= 64, `its threads stay within the bound (${most}; 5,391 without it)`);
  t.equal((await app.request('DELETE', '/api/v3/process/threads')).status, 200);
});
