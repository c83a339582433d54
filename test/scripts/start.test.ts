import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanEnv } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Starts a command the way an operator does and resolves with the URL the service prints. */
function listen(child: ChildProcess): Promise<{ url: string; stderr: () => string }> {
  let err = '';
  return new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`no URL printed: ${err}`)), 60_000);
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) { clearTimeout(timer); res({ url: m[1]!, stderr: () => err }); }
    });
    child.on('exit', () => { clearTimeout(timer); rej(new Error(`exited early: ${err}`)); });
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((res) => child.on('exit', (code) => res(code)));
}

/** The command line of a running process, as a supervisor's `ps` shows it. */
function serviceCmdline(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

t.test('scripts/start.sh builds, then execs one plain Node 24 process on the built JavaScript that SIGTERM stops', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'core-start-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  const child = spawn('bash', [join(ROOT, 'scripts/start.sh')], { cwd, env: cleanEnv({ CORE_ADDRESS: '127.0.0.1:0' }), stdio: ['ignore', 'ignore', 'pipe'] });
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  const { url } = await listen(child);
  const cmd = serviceCmdline(child.pid!);
  t.match(cmd[0], /node$/, 'bash exec-ed into node: the spawned pid is the service');
  t.equal(cmd.at(-1), join(ROOT, 'app/main.js'), 'the JavaScript the install step built (no type stripper at run time)');
  t.ok(cmd.includes('--max-semi-space-size=2'), 'relaunched in place with its V8 flags (core/runtime)');
  t.notOk(cmd.some((a) => /tsx|--import|--loader|--require/.test(a)), `no loader in ${cmd.join(' ')}`);
  const about = await (await fetch(`${url}/api`)).json() as { version: { compiler: string } };
  const major = Number(/node v(\d+)/.exec(about.version.compiler)?.[1]);
  t.ok(major >= 24, `runs on ${about.version.compiler}`);
  child.kill('SIGTERM');
  t.equal(await exited(child), 0, 'graceful exit on SIGTERM');
});

t.test('npm start: a SIGTERM to npm (as timeout sends) stops the service', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'core-start-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  const config = join(cwd, 'config.json');
  await writeFile(config, JSON.stringify({ version: 3, address: '127.0.0.1:0', db: { dir: join(cwd, 'db') }, plugins: [] }));
  const npm = spawn('npm', ['start', '--silent', '--', '--config', config], { cwd: ROOT, env: cleanEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  t.teardown(() => { if (npm.exitCode === null) npm.kill('SIGKILL'); });
  const { url } = await listen(npm);
  t.equal(await (await fetch(`${url}/ping`)).text(), 'pong');
  npm.kill('SIGTERM');
  t.equal(await exited(npm), 0, 'npm forwards SIGTERM to the service (exec chain) and returns its exit code');
  await waitFor(async () => { try { await fetch(`${url}/ping`); return false; } catch { return true; } }, { timeout: 30_000 });
  t.pass('the service is gone once npm is');
});
