import t from 'tap';
import { PendingUploads } from '../../../core/door/pending.ts';

t.test('PendingUploads: a reader waits until the last upload of its path ended, or its time is up', async (t) => {
  const p = new PendingUploads();
  t.notOk(p.has('/a.ts'));
  let settled = false;
  await p.settled('/a.ts', 60_000);
  p.begin('/a.ts');
  p.begin('/a.ts');
  const waiting = p.settled('/a.ts', 60_000).then(() => { settled = true; });
  p.end('/a.ts');
  await new Promise((r) => setImmediate(r));
  t.notOk(settled, 'one of two uploads still in progress');
  t.ok(p.has('/a.ts'));
  p.end('/a.ts');
  await waiting;
  t.ok(settled, 'the last one ended');
  t.notOk(p.has('/a.ts'));
  p.end('/a.ts');
  p.begin('/a.ts');
  t.ok(p.has('/a.ts'), 'an extra end does not make the count negative');
  await p.settled('/a.ts', 5);
  t.ok(p.has('/a.ts'), 'the time was up: the upload is still in progress');
});
