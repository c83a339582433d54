import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../helpers/cli.ts';
import { cleanEnv } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';
import { childPids } from '../helpers/net-proc.ts';

const MAIN = fileURLToPath(new URL('../../app/main.ts', import.meta.url));
// As `npm start` runs it: Node 24 strips the types itself; the tsx loader only on an older Node.
const TSX = (process.features as { typescript?: string }).typescript ? [] : ['--import', import.meta.resolve('tsx')];

type Tap = { teardown(fn: () => unknown): void };

t.test('with no config it starts on the embedded default under ./data and stops on SIGTERM', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'core-cli-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  const { child, url, exited, stderr } = await runCli(t, [], cleanEnv({ CORE_ADDRESS: '127.0.0.1:0' }), cwd);
  t.equal(await (await fetch(`${url}/ping`)).text(), 'pong');
  t.match(stderr(), /auth is off/);
  const cfg = JSON.parse(await readFile(join(cwd, 'data', 'config.json'), 'utf8'));
  t.equal(cfg.address, ':8080', 'the file keeps the default; the environment only overrides');
  t.ok(existsSync(join(cwd, 'data', 'db.json')));
  await fetch(`${url}/api/v3/metadata/k`, { method: 'PUT', body: '"v"', headers: { 'content-type': 'application/json' } });
  child.kill('SIGTERM');
  t.equal(await exited, 0, 'graceful exit');
  t.match(stderr(), /SIGTERM: shutting down/);
  const db = JSON.parse(await readFile(join(cwd, 'data', 'db.json'), 'utf8'));
  t.equal(db.metadata.system.k, 'v');
});

t.test('--config PATH and CORE_CONFIGFILE are honoured; SIGINT stops it', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'core-cli-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  const path = join(cwd, 'custom.json');
  await writeFile(path, JSON.stringify({ version: 3, name: 'from-flag', address: '127.0.0.1:0', db: { dir: join(cwd, 'db') }, plugins: [] }));
  const a = await runCli(t, ['--config', path], cleanEnv(), cwd);
  t.equal((await (await fetch(`${a.url}/api`)).json() as { name: string }).name, 'from-flag');
  a.child.kill('SIGINT');
  t.equal(await a.exited, 0);

  const b = await runCli(t, [], cleanEnv({ CORE_CONFIGFILE: path, CORE_NAME: 'from-env' }), cwd);
  t.equal((await (await fetch(`${b.url}/api`)).json() as { name: string }).name, 'from-env');
  b.child.kill('SIGTERM');
  t.equal(await b.exited, 0);
  t.notOk(existsSync(join(cwd, 'data')), 'no default ./data when a config file is named');
});

t.test('an invalid config stops the boot with every error', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'core-cli-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  const path = join(cwd, 'bad.json');
  await writeFile(path, JSON.stringify({ version: 3, address: 'x', log: { level: 'loud' }, plugins: [] }));
  const child = spawn(process.execPath, [...TSX, MAIN, '--config', path], { cwd, env: cleanEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  const code = await new Promise((res) => child.on('exit', res));
  t.equal(code, 1);
  t.match(err, /address: 'x' is not a host:port address/);
  t.match(err, /log\.level: 'loud' is not one of/);
});

t.test('SIGTERM stops the running ffmpeg children and keeps their order for the next start', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'core-cli-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  const { child, url, exited } = await runCli(t, [], cleanEnv({ CORE_ADDRESS: '127.0.0.1:0' }), cwd);
  const body = {
    id: 'sig', input: [{ id: 'in', address: 'testsrc2=size=64x64:rate=5', options: ['-f', 'lavfi', '-re'] }],
    output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
  };
  const add = await fetch(`${url}/api/v3/process`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  t.equal(add.status, 200);
  const ffmpeg = await waitFor(() => {
    const kids = childPids((cmd) => cmd.includes('testsrc2'), child.pid!);
    return kids.length ? kids : undefined;
  }, { what: 'an ffmpeg child' });
  child.kill('SIGTERM');
  t.equal(await exited, 0);
  // the confinement's pid namespace ends with the service: the kernel kills what is left in it and
  // an exited child may stay a zombie a moment until it is reaped (on a busy box it did)
  const running = (pid: number) => {
    try {
      return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
    } catch {
      return false;
    }
  };
  for (const pid of ffmpeg) {
    await waitFor(() => !running(pid), { what: `ffmpeg ${pid} gone`, timeout: 5000 }).catch(() => {});
    t.notOk(running(pid), `ffmpeg ${pid} is gone`);
  }
  const db = JSON.parse(await readFile(join(cwd, 'data', 'db.json'), 'utf8'));
  t.equal(db.process.sig.order, 'start', 'the order is kept, so it starts again with the service');
});

t.test('the banner says how children are confined, and says so when they are not', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'core-cli-'));
  t.teardown(() => rm(cwd, { recursive: true, force: true }));
  const a = await runCli(t, [], cleanEnv({ CORE_ADDRESS: '127.0.0.1:0' }), cwd);
  t.match(a.stderr(), /children: confined by Landlock/);
  a.child.kill('SIGTERM');
  await a.exited;
  const b = await runCli(t, [], cleanEnv({ CORE_ADDRESS: '127.0.0.1:0', MEDIA_CORE_CONFINE_WRAPPER: '/nonexistent/wrapper' }), cwd);
  t.match(b.stderr(), /children: NOT confined: the wrapper \/nonexistent\/wrapper is not built/);
  t.equal(await (await fetch(`${b.url}/ping`)).text(), 'pong', 'it starts all the same');
  b.child.kill('SIGTERM');
  await b.exited;
  const c = await runCli(t, [], cleanEnv({ CORE_ADDRESS: '127.0.0.1:0', MEDIA_CORE_CONFINE_WRAPPER: '/nonexistent/wrapper', CORE_ENCODER_CONFINEMENT_REQUIRE: 'true' }), cwd);
  t.match(c.stderr(), /encoder.confinement.require: none will run/);
  const body = { id: 'p', input: [{ id: 'in', address: 'testsrc2=d=1', options: ['-f', 'lavfi'] }], output: [{ id: 'out', address: '-', options: ['-f', 'null'] }] };
  await fetch(`${c.url}/api/v3/process`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  const state = await waitFor(async () => {
    const s = await (await fetch(`${c.url}/api/v3/process/p/state`)).json() as { exec: string; last_logline: string };
    return s.exec === 'failed' ? s : undefined;
  }, { what: 'the process refused' });
  t.match(state.last_logline, /cannot be confined/);
  c.child.kill('SIGTERM');
  await c.exited;
});
