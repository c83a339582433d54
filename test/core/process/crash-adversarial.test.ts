import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { runCli } from '../../helpers/cli.ts';
import { cleanEnv } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpegPids, VIDEO_IN } from './helpers.ts';

/*
 * Issue 11.4: a SIGKILLed (or OOM-killed) service must not leave its ffmpeg children running
 * next to the copies the next start makes. Three kill rounds, two autostarted processes:
 * after every restart there is exactly one ffmpeg per process. Confined children die with the
 * service (confine/kill9.test.ts); this is the safety net where they run unconfined (no Landlock),
 * so the service runs here without its confinement wrapper.
 */
const UNCONFINED = { MEDIA_CORE_CONFINE_WRAPPER: '/nonexistent/media-core-confine' };

t.test('children that outlive a SIGKILLed service are stopped before the restart starts new ones', async (t) => {
  const cwd = await mkdtemp(join(tmpdir(), 'core-crash-'));
  const marker = `crash-${randomBytes(6).toString('hex')}`;
  t.teardown(async () => {
    // whatever happened above, no ffmpeg of this test survives it
    for (const pid of ffmpegPids(marker, { anywhere: true })) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    await rm(cwd, { recursive: true, force: true });
  });
  await mkdir(join(cwd, 'disk'));
  const configPath = join(cwd, 'config.json');
  await writeFile(configPath, JSON.stringify({
    version: 3, address: '127.0.0.1:0', update_check: false, log: { level: 'info' },
    db: { dir: join(cwd, 'db') }, storage: { disk: { dir: join(cwd, 'disk') } },
  }));

  let svc = await runCli(t, ['--config', configPath], cleanEnv(UNCONFINED), cwd);
  for (const id of ['a', 'b']) {
    // an absolute path, not {diskfs}: restore must not depend on when a plugin registers placeholders (issue 8)
    const body = {
      id, autostart: true, reconnect: true, reconnect_delay_seconds: 1, input: [VIDEO_IN],
      output: [{ id: 'out', address: join(cwd, 'disk', `${marker}-${id}.ts`), options: ['-f', 'mpegts', '-y'] }],
    };
    const r = await fetch(`${svc.url}/api/v3/process`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    t.equal(r.status, 200, `process ${id} added`);
  }
  const both = () => ffmpegPids(`${marker}-a`, { anywhere: true }).length === 1 && ffmpegPids(`${marker}-b`, { anywhere: true }).length === 1;
  await waitFor(both, { what: 'one ffmpeg per process', timeout: 30_000 });

  for (let round = 1; round <= 3; round++) {
    // past its start (frames out): a child still starting may die with the service (below)
    await waitFor(async () => {
      const list = await (await fetch(`${svc.url}/api/v3/process?filter=state`)).json() as { state: { exec: string; progress: { frame: number } } }[];
      return list.length === 2 && list.every((p) => p.state.exec === 'running' && p.state.progress.frame > 0);
    }, { what: `round ${round}: both processes making progress`, timeout: 30_000 });
    const before = ffmpegPids(marker, { anywhere: true });
    svc.child.kill('SIGKILL');
    await svc.exited;
    // What the round is about: children that outlive their service. A child that is still starting
    // (before ffmpeg ignores SIGPIPE) dies on its next stderr write once the service is gone, as seen
    // on loaded CI runs; one survivor is enough to test the reaping.
    const survivors = ffmpegPids(marker, { anywhere: true }).filter((pid) => before.includes(pid));
    if (survivors.length < before.length) t.comment(`round ${round}: ${before.length - survivors.length} child(ren) ended with the service`);
    t.ok(survivors.length >= 1, `round ${round}: children outlived the service (as after an OOM kill)`);
    svc = await runCli(t, ['--config', configPath], cleanEnv(UNCONFINED), cwd);
    await waitFor(async () => {
      const list = await (await fetch(`${svc.url}/api/v3/process?filter=state`)).json() as { state: { exec: string } }[];
      return list.length === 2 && list.every((p) => p.state.exec === 'running');
    }, { what: `round ${round}: both processes running again`, timeout: 30_000 });
    t.equal(ffmpegPids(`${marker}-a`, { anywhere: true }).length, 1, `round ${round}: exactly one ffmpeg for a`);
    t.equal(ffmpegPids(`${marker}-b`, { anywhere: true }).length, 1, `round ${round}: exactly one ffmpeg for b`);
    t.notOk(ffmpegPids(marker, { anywhere: true }).some((pid) => before.includes(pid)), `round ${round}: the old children are gone`);
  }
  svc.child.kill('SIGTERM');
  await svc.exited;
  t.same(ffmpegPids(marker, { anywhere: true }), [], 'a graceful stop leaves nothing');
});
