import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { addProcess, nullProcess } from '../../core/process/helpers.ts';

// label patterns are RE2's syntax run in linear time: a backtracking RegExp held the main thread
// about 60 s on `^(.?){40}z$` against one process's labels (the test's 30 s limit fails it)
t.test('label patterns run in linear time; RE2 forms work; a query past the work bound is 400', async (t) => {
  const app = await startApp(t);
  const q = (labels: Record<string, string>, n = 1) => app.request('POST', '/api/v3/metrics', {
    body: { timerange_sec: 0, metrics: Array.from({ length: n }, () => ({ name: 'cpu_ncpu', labels })) },
  });
  const ncpu = await q({});
  t.equal(ncpu.status, 200);
  const labelled = await app.request('POST', '/api/v3/metrics', { body: { timerange_sec: 0, metrics: [{ name: 'mem_total' }, { name: 'filesystem_limit' }] } });
  const fs = labelled.body.metrics.find((m: { name: string }) => m.name === 'filesystem_limit');
  t.ok(fs?.labels?.name, 'a labelled series to match');
  const name: string = fs.labels.name;

  const one = async (labels: Record<string, string>) => {
    const r = await app.request('POST', '/api/v3/metrics', { body: { timerange_sec: 0, metrics: [{ name: 'filesystem_limit', labels }] } });
    t.equal(r.status, 200, JSON.stringify(labels));
    return r.body.metrics.filter((m: { labels: Record<string, string> }) => m.labels.name === name).length;
  };
  t.equal(await one({ name: `^(.?){40}${'z'.repeat(45)}$` }), 0, 'the backtracking case answers, no match');
  t.equal(await one({ name: `^${name}$` }), 1, 'an anchored name');
  t.equal(await one({ name: `\\A${name}\\z` }), 1, 'RE2 anchors');
  t.equal(await one({ name: `^(?i)${name.toUpperCase()}$` }), 1, 'RE2 flags');
  t.equal(await one({ name: '(a)\\1' }), 0, 'a backreference (RE2 has none) matches nothing');
  t.equal(await one({ name: '(' }), 0, 'a malformed pattern matches nothing');

  // many patterns, each tested on every series: bounded program and work, then a clear refusal
  const heavy = `(.?){1000}${'z'.repeat(40)}`;
  const big = await app.request('POST', '/api/v3/metrics', {
    body: { timerange_sec: 0, metrics: Array.from({ length: 3000 }, (_v, i) => ({ name: 'filesystem_limit', labels: { name: `${heavy}${i}` } })) },
  });
  t.equal(big.status, 400, 'too large a program');
  t.match(big.body, { code: 400, message: /too much work/, details: [/compile to more than/] });

  const id = 'p'.repeat(250);
  await addProcess(app, nullProcess(id));
  const long = await app.request('POST', '/api/v3/metrics', {
    body: { timerange_sec: 0, metrics: Array.from({ length: 60 }, (_v, i) => ({ name: 'restream_process', labels: { processid: `${heavy}${i}` } })) },
  });
  t.equal(long.status, 400, 'too much work on a long label');
  t.match(long.body, { code: 400, message: /too much work/, details: [/automaton steps/] });
  const fine = await app.request('POST', '/api/v3/metrics', { body: { timerange_sec: 0, metrics: [{ name: 'restream_process', labels: { processid: `^${id}$` } }] } });
  t.equal(fine.status, 200);
  t.ok(fine.body.metrics.length > 0, 'the long id matches a simple pattern');
  t.equal((await q({})).status, 200, 'the service answers after it');
});
