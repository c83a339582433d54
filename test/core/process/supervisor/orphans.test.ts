import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { isSameProcess, parseRecord, PidDir, reapOrphans, startTimeOf } from '../../../../core/process/supervisor/index.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { alive, args, supervise } from './helpers.ts';

const STAT = '123 (ff) mpeg) S 1 123 123 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 1000 200 18446744073709551615';

t.test('pure part: start time, record parsing, same-process decision', async (t) => {
  t.equal(startTimeOf(STAT), '987654', 'field 22, counted after the last )');
  t.equal(startTimeOf('garbage'), undefined);
  const rec = { pid: 123, startTime: '987654', binary: 'ffmpeg', args: ['-i', 'a b', ''] };
  t.same(parseRecord(JSON.stringify(rec)), rec);
  t.equal(parseRecord('{"pid":1,"startTime":"1","args":[]}'), undefined, 'never pid 1');
  t.equal(parseRecord('not json'), undefined);
  t.ok(isSameProcess(rec, STAT, 'ffmpeg\0-i\0a b\0\0'));
  t.ok(isSameProcess(rec, STAT, undefined), 'start time alone when the command line cannot be read');
  t.notOk(isSameProcess(rec, STAT.replace('987654', '987655'), 'ffmpeg\0-i\0a b\0\0'), 'a reused pid has another start time');
  t.notOk(isSameProcess(rec, STAT, 'bash\0-c\0x\0'), 'another program');
  t.notOk(isSameProcess(rec, undefined, undefined), 'gone');
});

t.test('the supervisor keeps a pid file while its child runs; the reaper stops a survivor', async (t) => {
  const dir = t.testdir({});
  const pids = new PidDir(join(dir, 'run'));
  const rec = supervise(t, { binary: 'sleep', prepare: args(['30']), pidFiles: pids });
  await rec.sup.start();
  const pid = rec.sup.status().pid!;
  const files = readdirSync(join(dir, 'run'));
  t.equal(files.length, 1, 'one pid file');
  const stored = parseRecord(readFileSync(join(dir, 'run', files[0]!), 'utf8'))!;
  t.match(stored, { pid, binary: 'sleep', args: ['30'] });
  t.equal(stored.startTime, startTimeOf(readFileSync(`/proc/${pid}/stat`, 'utf8')));
  await rec.sup.stop();
  t.same(readdirSync(join(dir, 'run')), [], 'removed when the run ends');

  // a child whose service died: detached, its pid file left behind
  const orphan = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
  t.teardown(() => { if (alive(orphan.pid!)) process.kill(orphan.pid!, 'SIGKILL'); });
  await waitFor(() => existsSync(`/proc/${orphan.pid}/stat`), { what: 'the orphan started' });
  pids.record('x', orphan.pid!, 'sleep', ['30']);
  writeFileSync(join(dir, 'run', 'junk.pid'), 'not ours');
  const exited = once(orphan, 'exit');
  t.same(await reapOrphans(join(dir, 'run')), [orphan.pid], 'stopped');
  await exited;
  t.same(readdirSync(join(dir, 'run')), [], 'every pid file gone');
});

t.test('a recorded pid now used by another process is left alone', async (t) => {
  const dir = t.testdir({});
  const other = spawn('sleep', ['30'], { stdio: 'ignore' });
  t.teardown(() => { other.kill('SIGKILL'); });
  await waitFor(() => existsSync(`/proc/${other.pid}/stat`), { what: 'started' });
  writeFileSync(join(dir, 'a.pid'), JSON.stringify({ pid: other.pid, startTime: '1', binary: 'sleep', args: ['30'] }));
  t.same(await reapOrphans(dir), []);
  t.ok(alive(other.pid!));
});
