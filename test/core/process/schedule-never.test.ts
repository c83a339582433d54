import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startApp } from '../../helpers/app.ts';
import { lastStart, nextStart, parseSchedule } from '../../../core/process/schedule.ts';
import { addProcess, nullProcess, state } from './helpers.ts';

/*
 * Issue 43 point 6: a `scheduler` that never fires (a date that never comes) and other odd forms
 * are a 400 naming the field or a valid schedule, never a 500: nothing stored on POST or PUT, and a
 * hand-edited db.json with one lists the process as invalid.
 */

const dbPath = (dir: string) => join(dir, 'db', 'db.json');

/** Dates that never come: croner answers no next run, or fails with a TypeError or a full stack. */
const NEVER = ['0 0 31 2 *', '0 0 30 2 *', '0 0 31 4,6,9,11 *', '30 12 31 2,4 *'];
/** Odd forms that are not schedules at all. */
const INVALID = ['2024-02-30T00:00:00Z', '2023-02-29T12:00:00Z', '2030-01-01T24:00:00Z', '2030-01-01T23:59:60Z',
  '2030-01-01T00:00:00+24:00', '+275760-09-13T00:00:00Z', '99999-01-01T00:00:00Z', '0 0 0 * *', '*/0 * * * *', '0 0 * 13 *'];
/** Odd but valid: rare dates, a last day, far past and far future one-off times. */
const VALID = ['0 0 29 2 *', '0 0 L 2 *', '0 0 31 * *', '59 23 31 12 *', '0 0 13 * 5', '0000-01-01T00:00:00Z',
  '1970-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '2024-02-29T00:00:00Z'];

t.test('the schedule functions never throw, whatever the expression', async (t) => {
  const now = Date.now();
  for (const v of [...NEVER, ...INVALID]) {
    const s = parseSchedule(v);
    t.type(s, 'string', `${v}: ${String(s)}`);
  }
  for (const v of VALID) {
    const s = parseSchedule(v);
    t.not(typeof s, 'string', `${v}: a schedule`);
    if (typeof s === 'string') continue;
    t.doesNotThrow(() => { nextStart(s, now); lastStart(s, now, 0); }, `${v}: next and last computed`);
  }
  const leap = parseSchedule('0 0 29 2 *');
  if (typeof leap === 'string') throw new Error(leap);
  const at = Date.parse('2026-06-01T00:00:00Z');
  t.equal(lastStart(leap, at, 0), Date.parse('2024-02-29T00:00:00Z'), 'the last leap day (croner fails there backwards)');
  t.equal(nextStart(leap, at), Date.parse('2028-02-29T00:00:00Z'), 'the next leap day');
  t.equal(lastStart(leap, at, Date.parse('2024-03-01T00:00:00Z')), undefined, 'none since the floor');
  const weekly = parseSchedule('0 10 * * 1');
  if (typeof weekly === 'string') throw new Error(weekly);
  const monday = Date.parse('2030-01-07T10:00:00Z');
  t.equal(lastStart(weekly, monday, 0), monday, 'a start at the very time counts');
  t.equal(lastStart(weekly, monday - 1, 0), monday - 7 * 86_400_000, 'one ms before: the week before');
});

t.test('a scheduler that never fires is a 400 on POST and PUT, nothing stored', async (t) => {
  const app = await startApp(t);
  await addProcess(app, nullProcess('kept', { scheduler: '*/5 * * * *' }));
  const listBefore = (await app.request('GET', '/api/v3/process')).body;
  const dbBefore = readFileSync(dbPath(app.dir), 'utf8');
  for (const scheduler of NEVER) {
    const post = await app.request('POST', '/api/v3/process', { body: nullProcess('never', { scheduler }) });
    t.equal(post.status, 400, `POST ${scheduler}`);
    t.equal(post.body.message, 'Invalid process config');
    t.match(post.body.details?.[0], /^scheduler: .*never fires/, `POST ${scheduler}: ${post.body.details?.[0]}`);
    const put = await app.request('PUT', '/api/v3/process/kept', { body: nullProcess('kept', { scheduler }) });
    t.equal(put.status, 400, `PUT ${scheduler}`);
    t.match(put.body.details?.[0], /^scheduler: /);
  }
  for (const scheduler of INVALID) {
    const post = await app.request('POST', '/api/v3/process', { body: nullProcess('odd', { scheduler }) });
    t.equal(post.status, 400, `POST ${scheduler}: ${post.text}`);
    t.match(post.body.details?.[0], /^scheduler: /);
  }
  t.same((await app.request('GET', '/api/v3/process')).body, listBefore, 'the list is unchanged');
  t.equal(readFileSync(dbPath(app.dir), 'utf8'), dbBefore, 'db.json is unchanged');
  for (const [i, scheduler] of VALID.entries()) {
    const r = await app.request('POST', '/api/v3/process', { body: nullProcess(`odd${i}`, { scheduler, autostart: true }) });
    t.equal(r.status, 200, `${scheduler}: a valid schedule${r.status === 200 ? "" : ` (${r.text})`}`);
    t.equal((await state(app, `odd${i}`)).order, 'start');
  }
});

t.test('a hand-edited db.json with a scheduler that never fires lists the process as invalid', async (t) => {
  const app = await startApp(t);
  await addProcess(app, nullProcess('good'));
  await addProcess(app, nullProcess('feb31', { autostart: true, scheduler: '0 10 * * 1' }));
  await app.service.close();
  const db = JSON.parse(readFileSync(dbPath(app.dir), 'utf8'));
  db.process.feb31.config.scheduler = '0 0 31 2 *';
  writeFileSync(dbPath(app.dir), JSON.stringify(db));

  const again = await startApp(t, { dir: app.dir });
  const s = await state(again, 'feb31');
  t.same([s.order, s.exec], ['start', 'failed'], 'listed, invalid');
  t.match(s.last_logline, /^invalid process definition: scheduler: .*never fires/);
  t.equal((await state(again, 'good')).exec, 'finished', 'the others are there');
  t.equal(JSON.parse(readFileSync(dbPath(app.dir), 'utf8')).process.feb31.config.scheduler, '0 0 31 2 *', 'kept as stored');
});
