import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { state } from '../helpers.ts';
import { hlsProcess } from './helpers.ts';

/*
 * A `stop` while the waiting playlist was still being made (its slate clip is encoded by ffmpeg at
 * first need, seconds on a busy box) removed nothing, and the write that came after put the waiting
 * playlist up for a process that no longer waited: players asked it for ever (found by
 * ondemand-e2e in a busy suite). The encoder here takes 2 s to start, so the stop always comes
 * while the clip is made; 3 s after the clip is done the playlist must be gone.
 */
t.test('a stop during the making of the waiting playlist leaves no waiting playlist', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'core-slow-ffmpeg-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const slow = join(dir, 'slow-ffmpeg');
  writeFileSync(slow, '#!/bin/sh\nsleep 2\nexec ffmpeg "$@"\n');
  chmodSync(slow, 0o755);
  chmodSync(dir, 0o755);
  const app = await startApp(t, { config: { encoder: { binary: slow } } });
  const add = await app.request('POST', '/api/v3/process', { body: hlsProcess('cam8', 'cam8') });
  t.equal(add.status, 200);
  await waitFor(async () => (await state(app, 'cam8')).ondemand?.waiting === true, { what: 'waiting' });
  t.equal((await app.request('PUT', '/api/v3/process/cam8/command', { body: { command: 'stop' } })).status, 200);
  // the slate clip is done about 2 s after the add (the encoder's sleep): then the write would land
  await waitFor(async () => (await fetch(`${app.url}/memfs/cam8.ondemand-slate.ts`)).status === 200 || undefined,
    { timeout: 8000, what: 'the slate clip made' }).catch(() => undefined); // with the fix it is not written at all
  await new Promise((r) => setTimeout(r, 3000));
  t.equal((await fetch(`${app.url}/memfs/cam8.m3u8`)).status, 404, 'no waiting playlist after the stop');
  t.match((await state(app, 'cam8')).ondemand, { waiting: false });
});
