import t from 'tap';
import { startApp, type TestApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { addProcess, hlsWithCleanup } from './helpers.ts';

const segments = async (app: TestApp, prefix: string): Promise<string[]> =>
  ((await app.request('GET', '/api/v3/fs/mem')).body as { name: string }[])
    .map((f) => f.name).filter((n) => n.startsWith(`/${prefix}_`)).sort();

t.test('cleanup rules bound the segment count; purge_on_delete clears them', async (t) => {
  const app = await startApp(t);
  // the playlist lists every segment and ffmpeg deletes none: only the rule bounds them (an alias names the filesystem too)
  await addProcess(app, hlsWithCleanup('clean', '{memfs}', 'mem', 'memfs'));
  // wait until ffmpeg has written well over 3 segments (their numbers say how many)
  await waitFor(async () => {
    const names = await segments(app, 'clean');
    return names.some((n) => Number(/_(\d+)\.ts$/.exec(n)?.[1]) >= 7);
  }, { what: 'segment 7', timeout: 30_000 });
  // a tick (every second) trims to 3 while ffmpeg adds one every 0.5 s (a burst after a stall on a
  // loaded box: more), so a listing may never fall in the window after a tick: the encoder stops
  // (the rules hold for a process that does not run) and the next tick leaves the newest 3
  t.equal((await app.request('PUT', '/api/v3/process/clean/command', { body: { command: 'stop' } })).status, 200);
  const bounded = await waitFor(async () => {
    const names = await segments(app, 'clean');
    return names.length <= 3 ? names : undefined;
  }, { what: 'at most 3 segments', timeout: 30_000 });
  t.ok(bounded.length >= 1 && bounded.length <= 3, `kept ${bounded.join(', ')}`);
  const numbers = bounded.map((n) => Number(/_(\d+)\.ts$/.exec(n)![1])).sort((a, b) => a - b);
  t.ok(numbers[0]! >= 4, 'the oldest were deleted, the newest kept');

  const del = await app.request('DELETE', '/api/v3/process/clean');
  t.equal(del.status, 200);
  // the encoder's final playlist upload may land after it exited: a second purge follows
  const all = async () => ((await app.request('GET', '/api/v3/fs/mem')).body as { name: string }[]).map((f) => f.name);
  await waitFor(async () => (await all()).every((n) => !n.startsWith('/clean')), { what: 'playlist and segments purged', timeout: 20_000 });
  await new Promise((r) => setTimeout(r, 2500));
  t.same((await all()).filter((n) => n.startsWith('/clean')), [], 'purged on delete and they stay gone');
});
