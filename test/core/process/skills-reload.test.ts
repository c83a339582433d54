import t from 'tap';
import pino from 'pino';
import { Skills } from '../../../core/process/skills.ts';
import { directSpawn, type Spawn } from '../../../core/process/run-collect.ts';

// real ffmpeg runs; the spawn is counted on its way
t.test('reloads asked while one runs share it: one detection, not one per request', async (t) => {
  const skills = Skills.retained((_k, create) => create(), 'ffmpeg', pino({ level: 'silent' }));
  let spawned = 0;
  const counting: Spawn = (file, args, o) => {
    spawned++;
    return directSpawn(file, args, o);
  };
  skills.use(counting);
  const first = await skills.get();
  t.ok(first?.ffmpeg.version, 'detected');
  const perDetection = spawned;
  t.ok(perDetection > 0);

  const all = await Promise.all(Array.from({ length: 20 }, () => skills.reload()));
  t.equal(spawned, perDetection * 2, 'twenty concurrent reloads ran the encoder as one detection does');
  t.ok(all.every((s) => s === all[0] && s?.ffmpeg.version === first!.ffmpeg.version), 'every caller got the new result');

  await skills.reload();
  t.equal(spawned, perDetection * 3, 'a reload after them detects again');
  await skills.settled();
});
