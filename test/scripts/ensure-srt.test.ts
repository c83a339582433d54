import t from 'tap';
import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, symlink, writeFile, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A throwaway copy of the scripts and the addon sources (node_modules linked, never installed). */
async function scratch(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'core-ensure-srt-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'plugins/srt'), { recursive: true });
  await cp(join(ROOT, 'scripts'), join(dir, 'scripts'), { recursive: true });
  await cp(join(ROOT, 'plugins/srt/addon'), join(dir, 'plugins/srt/addon'), { recursive: true, filter: (s) => !s.includes('/build') });
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

function run(dir: string): Promise<{ code: number | null; log: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [join(dir, 'scripts/ensure-srt.sh')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    child.stdout.on('data', (d: Buffer) => { log += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { log += d.toString(); });
    child.on('close', (code) => resolve({ code, log }));
  });
}

t.test('builds the addon and the host when missing, skips when up to date, rebuilds when a source is newer', async (t) => {
  const dir = await scratch(t);
  const built = join(dir, 'plugins/srt/addon/build/Release/srt_addon.node');
  const host = join(dir, 'plugins/srt/addon/build/Release/srt-host');
  const first = await run(dir);
  t.equal(first.code, 0, first.log);
  t.match(first.log, /building the SRT addon/);
  t.match(first.log, /building the SRT host/);
  const mtime = (await stat(built)).mtimeMs;
  const hostMtime = (await stat(host)).mtimeMs;
  t.ok((await stat(host)).mode & 0o100, 'the host is executable');
  const again = await run(dir);
  t.equal(again.log, '', 'up to date: nothing to do');
  t.equal((await stat(built)).mtimeMs, mtime);
  t.equal((await stat(host)).mtimeMs, hostMtime);
  const later = new Date(Date.now() + 5000);
  await utimes(join(dir, 'plugins/srt/addon/srt-addon.cc'), later, later);
  const rebuilt = await run(dir);
  t.match(rebuilt.log, /building the SRT addon/, 'a newer source rebuilds');
  t.match(rebuilt.log, /building the SRT host/, 'both (node-gyp empties the build folder)');
  await rm(host);
  const missing = await run(dir);
  t.match(missing.log, /building the SRT host/, 'a missing host is built');
  await stat(host);
});

t.test('a failing addon build says why and does not fail the script', async (t) => {
  const dir = await scratch(t);
  await writeFile(join(dir, 'plugins/srt/addon/srt-addon.cc'), 'this is not C++\n');
  const r = await run(dir);
  t.equal(r.code, 0);
  t.match(r.log, /the SRT addon did not build; the SRT tests stay unavailable/);
  t.match(r.log, /error/i, 'the compiler error is shown');
});

t.test('a failing host build says why, keeps the addon and does not fail the script', async (t) => {
  const dir = await scratch(t);
  await writeFile(join(dir, 'plugins/srt/addon/host.cc'), 'this is not C++\n');
  const r = await run(dir);
  t.equal(r.code, 0);
  t.match(r.log, /the SRT host did not build; SRT stays unavailable/);
  t.match(r.log, /host\.cc.*error/i, 'the compiler error is shown');
  await stat(join(dir, 'plugins/srt/addon/build/Release/srt_addon.node'));
});
