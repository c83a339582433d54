import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';

/*
 * Without playout.enable: no relay, `playout:` inputs are read directly (stock ffmpeg cannot open
 * `playout:`), and every playout route is the reference's 404.
 */

const proc = {
  id: 'p', reconnect: true, reconnect_delay_seconds: 1, autostart: true,
  input: [{ id: 'in', address: 'playout:{rtmp,name=cam}', options: ['-rw_timeout', '2000000'] }],
  output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
};

t.test('disabled: the prefix is stripped from the command, routes answer 404 with the reason', async (t) => {
  const app = await startApp(t, { config: { rtmp: { enable: true, address: '127.0.0.1:0' }, playout: { enable: false } } });
  t.equal((await app.request('POST', '/api/v3/process', { body: proc })).status, 200, 'the placeholder inside playout: resolves and validates');
  const command = await waitFor(async () => {
    const s = (await app.request('GET', '/api/v3/process/p/state')).body;
    return Array.isArray(s.command) && s.command.length ? s.command as string[] : undefined;
  }, { what: 'the command of the first run', timeout: 20_000 });
  const i = command.indexOf('-i');
  t.match(command[i + 1], /^rtmp:\/\/127\.0\.0\.1:\d+\/cam$/, 'read directly, without the playout: prefix');
  t.same(command.slice(i - 2, i), ['-rw_timeout', '2000000'], 'the input options stay');
  t.equal((await app.request('POST', '/api/v3/process', { body: { ...proc, id: 'idle', autostart: false } })).status, 200);
  const idle = (await app.request('GET', '/api/v3/process/idle/state')).body.command as string[];
  t.match(idle[idle.indexOf('-i') + 1], /^rtmp:\/\/127\.0\.0\.1:\d+\/cam$/, 'a process never started shows the direct read too (viewCommand)');

  for (const path of ['status', 'reopen', 'keyframe/last.jpg', 'errorframe/encode']) {
    const r = await app.request('GET', `/api/v3/process/p/playout/in/${path}`);
    t.equal(r.status, 404, path);
    t.same(r.body, { code: 404, message: 'Unknown process or input', details: ['playout is not enabled (playout.enable)'] }, path);
  }
  const put = await app.request('PUT', '/api/v3/process/p/playout/in/stream', { raw: 'rtmp://x/y', headers: { 'content-type': 'text/plain' } });
  t.equal(put.status, 404);
});
