import t from 'tap';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { fresh, threadsConfig } from './helpers.ts';

/*
 * ffmpeg does not wait: a viewer may fetch playlist n the moment main stored it, over a connection
 * the kernel gives to a thread that has not handled the broadcast yet. The thread must answer n
 * (it drains what main published before answering), never n-1. Over real sockets the race is
 * rare; test/plugins/memfs/thread.test.ts pins the drain down without timing.
 */
t.test('an overwrite is seen by every thread as soon as main answered the write (no stale playlist)', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2) });
  const url = `${app.url}/memfs/live/p.m3u8`;
  const version = (n: number) => `#EXTM3U\n#EXT-X-MEDIA-SEQUENCE:${n}\n${'#EXTINF:1.0,\nseg.ts\n'.repeat(6)}`;
  t.equal((await fresh(url, { method: 'PUT', body: version(0) })).status, 201);
  await waitFor(async () => {
    await fresh(url);
    return (await app.service.threads.stats()).every((s) => s.served > 0);
  }, { timeout: 30_000, what: 'threads serving' });
  const stale: string[] = [];
  for (let n = 1; n <= 150; n++) {
    t.equal((await fresh(url, { method: 'PUT', body: version(n) })).status, 204, `write ${n}`);
    // readers at once, in parallel, over fresh connections (spread over main and the threads)
    const reads = await Promise.all([0, 1, 2, 3].map(() => fresh(url)));
    for (const r of reads) {
      const got = /MEDIA-SEQUENCE:(\d+)/.exec(r.body.toString())?.[1];
      if (got !== String(n)) stale.push(`${n}: ${r.status} ${got}`);
    }
  }
  t.same(stale, [], 'no read older than the last answered write');
  const stats = await app.service.threads.stats();
  t.ok(stats.every((s) => s.served > 100), `threads answered the reads themselves (${JSON.stringify(stats)})`);
});
