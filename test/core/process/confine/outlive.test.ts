import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { alive } from './helpers.ts';
import { detectMechanism } from '../../../../core/process/confine/mechanism.ts';
import { request, type Requester, type TestLike } from '../../../helpers/app.ts';
import { startCli, type CliApp } from '../../../helpers/cli.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { VIDEO_IN } from '../helpers.ts';

/*
 * Issue 43.3: everything a child starts dies with the service. The encoder is a wrapper that leaves a
 * grandchild in a session of its own (setsid) and a double-forked one, then execs ffmpeg; neither is
 * the service's child, and neither inherits ffmpeg's parent-death signal. 2 s after a kill -9 of the
 * service, and after a normal SIGTERM stop, both are gone (found by a marker in their command line,
 * checked by pid).
 */

const m = detectMechanism();
const skip = m.mechanism !== 'landlock' ? 'no Landlock here' : !m.ns ? 'no pid namespace can be entered here' : false;

/** Pids of the processes whose command line holds `marker`. */
function pidsOf(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').includes(marker)) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

async function leaver(t: TestLike & { equal(a: unknown, b: unknown): void }, tag: string): Promise<{ cli: CliApp; pids: number[] }> {
  // a unique sleep length is the marker: `sleep` shows it in its command line
  const marker = `${90000 + (process.pid % 9000)}.${tag}${Date.now() % 100000}`; // a number: sleep takes it
  const dir = mkdtempSync(join(tmpdir(), 'core-leaver-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const wrapper = join(dir, 'leaver.sh');
  writeFileSync(wrapper, `#!/bin/sh
setsid sleep ${marker} </dev/null >/dev/null 2>&1 &
( sleep ${marker} </dev/null >/dev/null 2>&1 & ) &
exec ffmpeg "$@"
`);
  chmodSync(wrapper, 0o755);
  chmodSync(dir, 0o755);
  t.teardown(() => { for (const pid of pidsOf(marker)) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } });
  // the encoder is the operator's: the config file names it
  const cli = await startCli(t, { encoder: { binary: wrapper } });
  const app: Requester = { request: (method, path, opts) => request(cli.url, method, path, opts) };
  const body = { id: 'leaver', input: [VIDEO_IN], output: [{ id: 'out', address: '-', options: ['-f', 'null'] }] };
  t.equal((await app.request('POST', '/api/v3/process', { body })).status, 200);
  const pids = await waitFor(() => { const p = pidsOf(marker); return p.length >= 2 ? p : undefined; }, { what: 'both grandchildren running' });
  return { cli, pids };
}

async function goneWithin(pids: number[], ms: number): Promise<number[]> {
  const deadline = Date.now() + ms;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return pids.filter(alive);
}

t.test('kill -9 of the service: the grandchildren a child left are gone 2 s later', { skip }, async (t) => {
  const { cli, pids } = await leaver(t, '1');
  cli.child.kill('SIGKILL');
  t.same(await goneWithin(pids, 2000), [], 'none alive');
});

t.test('a SIGTERM stop of the service: the grandchildren are gone 2 s after it exited', { skip }, async (t) => {
  const { cli, pids } = await leaver(t, '2');
  const exited = new Promise((r) => cli.child.once('exit', r));
  cli.child.kill('SIGTERM');
  await exited;
  t.same(await goneWithin(pids, 2000), [], 'none alive');
});
