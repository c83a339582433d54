import t from 'tap';
import { alive } from './helpers.ts';
import { request, type Requester } from '../../../helpers/app.ts';
import { startCli } from '../../../helpers/cli.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { ffmpegPids, VIDEO_IN } from '../helpers.ts';

/*
 * Issue 26: the children die with the service. A kill -9 gives the service no chance to stop them
 * itself, so only the kernel can: 2 s later none of its ffmpegs is alive (checked by pid).
 */

t.test('kill -9 of the service: no ffmpeg of it is alive 2 s later', async (t) => {
  const cli = await startCli(t);
  const app: Requester = { request: (method, path, opts) => request(cli.url, method, path, opts) };
  const marker = `kill9-${process.pid}-${Date.now()}`;
  const ids = ['k1', 'k2', 'k3'];
  for (const id of ids) {
    const body = { id, input: [VIDEO_IN], output: [{ id: 'out', address: '-', options: ['-metadata', `comment=${marker}`, '-f', 'null'] }] };
    t.equal((await app.request('POST', '/api/v3/process', { body })).status, 200);
  }
  // every input is open: each reports frames
  for (const id of ids) {
    await waitFor(async () => {
      const s = (await app.request('GET', `/api/v3/process/${id}/state`)).body;
      return s.exec === 'running' && s.progress.frame > 0;
    }, { what: `${id} running with frames` });
  }
  const pids = ffmpegPids(marker);
  t.equal(pids.length, 3, 'three ffmpegs');
  // should the kernel not stop them, the test does not leave them behind
  t.teardown(() => { for (const pid of pids) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } });
  cli.child.kill('SIGKILL');
  const deadline = Date.now() + 2000;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  t.same(pids.filter(alive), [], 'none alive');
});
