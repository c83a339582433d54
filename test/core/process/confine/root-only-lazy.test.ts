import t from 'tap';
import { startApp } from '../../../helpers/app.ts';
import { runOnce } from './helpers.ts';

const NULL_OUT = { output: [{ id: 'out', address: '-', options: ['-f', 'null'] }] };

/*
 * Issue 46.4: a service run as root looks for what only root may read (root-only.ts: a walk of
 * /etc, /var, /home, ...) once, at the first child's start, not while it starts: a start with
 * 1,000 stored processes and no child to run paid for the walk before its first answer.
 */

t.test('as root: what only root may read is found at the first child, once', { skip: process.getuid?.() !== 0 && 'the walk is made only as root' }, async (t) => {
  const app = await startApp(t);
  const retained = app.service.app.kernel.retained;
  t.equal((await app.request('GET', '/api/v3/process')).status, 200, 'the API answers');
  t.notOk(retained.has('core:root-only'), 'not looked for while the service started');
  const run = await runOnce(app, 'first', NULL_OUT);
  t.equal(run.status, 200, 'a child ran');
  const found = retained.get('core:root-only');
  t.ok(Array.isArray(found), 'looked for at its start');
  await runOnce(app, 'second', NULL_OUT);
  t.equal(retained.get('core:root-only'), found, 'and not again');
});
