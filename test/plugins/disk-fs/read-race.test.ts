import t from 'tap';
import { writeFile, unlink, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createTestApp } from '../../../testkit/index.ts';

/**
 * ffmpeg's HLS muxer deletes old segments (`delete_segments`) while players fetch them: a GET that
 * loses that race must be a 404, never a 500 with the server's absolute path.
 */
t.test('GETs racing deletes of files and folders answer 200 or 404, never 500', async (t) => {
  const app = await createTestApp({ t, plugins: ['disk-fs'] });
  const disk = join(app.dir, 'disk');
  let stop = false;
  const churn = (async () => {
    for (let i = 0; !stop; i++) {
      const dir = join(disk, 'seg');
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, 'a.ts'), Buffer.alloc(4096, i));
      await writeFile(join(disk, 'b.ts'), Buffer.alloc(1024, i));
      await new Promise((r) => setImmediate(r));
      await unlink(join(disk, 'b.ts')).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    }
  })();
  const seen = new Map<number, number>();
  const bad: string[] = [];
  for (let round = 0; round < 150; round++) {
    const rs = await Promise.all(['/seg/a.ts', '/b.ts', '/seg/', '/seg/a.ts'].map((p) => app.request('GET', p)));
    for (const r of rs) {
      seen.set(r.status, (seen.get(r.status) ?? 0) + 1);
      if (r.status >= 500 || r.text.includes(app.dir)) bad.push(`${r.status} ${r.text.slice(0, 200)}`);
    }
  }
  stop = true;
  await churn;
  t.same(bad, [], `no 500 and no server path (statuses: ${JSON.stringify([...seen])})`);
});
