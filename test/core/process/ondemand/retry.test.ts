import t from 'tap';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { state, waitState } from '../helpers.ts';
import { hlsProcess } from './helpers.ts';

/*
 * An on-demand process whose run ended by itself with nothing to bring it back (a start refused
 * or failed, an exit with no reconnect) waits again: the next demand starts it. Before, the
 * demand runner kept counting the dead run as running while viewers kept asking (each request
 * refreshed its idle time), so a camera file that came a moment late was never read. A demand put
 * off for the 2 s after a failed run is charged to no client's on-demand budget (a lone player
 * asking on was answered 429 for the budget's window).
 */

const run = promisify(execFile);

t.test('a failed on-demand run waits again, and the next viewer\'s request starts it', async (t) => {
  // (a budget of 5 starts per client: a put-off demand is no start, so a player asking on is not locked out)
  const app = await startApp(t, { config: { encoder: { ondemand: { max_starts_per_client: 5 } } } });
  const clip = join(app.dir, 'disk', 'late.mp4');
  const body = hlsProcess('late', 'late', {
    reconnect: false,
    input: [{ id: 'in', address: '{diskfs}/late.mp4', options: ['-re', '-stream_loop', '-1'] }],
    ondemand: { enable: true, idle_seconds: 60 },
  });
  t.equal((await app.request('POST', '/api/v3/process', { body })).status, 200);
  await waitState(app, 'late', (s) => s.ondemand?.waiting === true, 'waiting');
  const ask = () => fetch(`${app.url}/memfs/late.m3u8`).then(async (r) => ({ status: r.status, text: await r.text() }));
  await waitFor(async () => { const r = await ask(); return r.status === 200 && r.text.includes('on demand: waiting') || undefined; }, { timeout: 15_000, what: 'the waiting playlist (a viewer asks)' });
  // no such file: the run fails at once, with no reconnect
  const failed = await waitState(app, 'late', (s) => s.exec === 'failed', 'the run failed: its input is missing', 20_000);
  t.match(failed.last_logline, /late\.mp4/, `its state says why: ${failed.last_logline}`);
  const again = await waitState(app, 'late', (s) => s.ondemand?.waiting === true, 'waiting again');
  t.equal(again.exec, 'failed', 'waiting again, the failed run\'s state kept');
  // a viewer asking ten times a second does not respawn it per request: at most one start per 2 s
  const runsBefore = ((await app.request('GET', '/api/v3/process/late/report')).body.history as unknown[]).length;
  const until = Date.now() + 4000;
  while (Date.now() < until) {
    await ask();
    await new Promise((r) => setTimeout(r, 100));
  }
  const runs = ((await app.request('GET', '/api/v3/process/late/report')).body.history as unknown[]).length - runsBefore;
  t.ok(runs <= 3, `${runs} runs in 4 s of asking (a run that fails at once is retried no sooner than 2 s after)`);
  // the file comes; the viewer, asking on, gets ffmpeg's playlist
  await run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25', '-t', '2', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-y', clip]);
  const real = await waitFor(async () => {
    const r = await ask();
    return r.status === 200 && r.text.includes('#EXTINF') && !r.text.includes('on demand: waiting') ? r.text : undefined;
  }, { timeout: 30_000, interval: 500, what: 'ffmpeg\'s playlist after the file came' });
  t.match(real, /late_\d+\.ts/, 'the process runs for the viewer');
  t.match((await state(app, 'late')).ondemand, { waiting: false, started_by: 'hls' });
});
