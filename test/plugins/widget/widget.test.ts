import t from 'tap';
import { createTestApp } from '../../../testkit/index.ts';
import { waitFor } from '../../helpers/wait.ts';
import { addProcess, nullProcess, waitState } from '../../core/process/helpers.ts';

t.test('GET /api/v3/widget/process/{id}: public, uptime while running, zeros without sessions', async (t) => {
  const app = await createTestApp({ t, plugins: ['auth', 'widget'], config: { api: { auth: { enable: true, username: 'admin', password: 'secret-pass' } } } });
  const token = (await app.request('POST', '/api/login', { body: { username: 'admin', password: 'secret-pass' } })).body.access_token as string;
  t.ok(token, 'logged in');
  const add = await app.request('POST', '/api/v3/process', { body: nullProcess('w'), token });
  t.equal(add.status, 200);

  const stopped = await app.request('GET', '/api/v3/widget/process/w');
  t.equal(stopped.status, 200, 'no credential needed');
  t.same(stopped.body, { current_sessions: 0, total_sessions: 0, uptime: 0 });
  t.equal((await app.request('GET', '/api/v3/process/w')).status, 401, 'while the process API wants one');

  await app.request('PUT', '/api/v3/process/w/command', { body: { command: 'start' }, token });
  await waitFor(async () => (await app.request('GET', '/api/v3/widget/process/w')).body.uptime >= 1, { what: 'uptime' });
  const running = (await app.request('GET', '/api/v3/widget/process/w')).body;
  t.same(Object.keys(running).sort(), ['current_sessions', 'total_sessions', 'uptime']);

  const missing = await app.request('GET', '/api/v3/widget/process/nope');
  t.same([missing.status, missing.body], [404, { code: 404, message: 'Unknown process ID', details: ['unknown process'] }]);
});

t.test('the widget reads the processes service only', async (t) => {
  const app = await createTestApp({ t, plugins: ['widget'] });
  await app.listening(); // autostart happens once the app listens
  await addProcess(app, nullProcess('x', { autostart: true }));
  await waitState(app, 'x', (s) => s.exec === 'running', 'running');
  const w = await app.request('GET', '/api/v3/widget/process/x');
  t.equal(w.status, 200);
  t.ok(Number.isInteger(w.body.uptime));
});
