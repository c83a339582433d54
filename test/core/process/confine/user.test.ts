import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { request, type Requester } from '../../../helpers/app.ts';
import { startCli } from '../../../helpers/cli.ts';
import { runOnce } from './helpers.ts';

/*
 * Issue 26: the confinement holds when the service runs as an ordinary user too (as in the Docker
 * image and the systemd unit), not only as root.
 */

t.test('the service as an ordinary user: children confined the same way', { skip: process.getuid?.() !== 0 && 'needs root to start the service as another user' }, async (t) => {
  const cli = await startCli(t, { api: { auth: { password: 'pw-as-nobody-0042' } } }, { uid: 65534 });
  const app: Requester = { request: (method, path, opts) => request(cli.url, method, path, opts) };
  const ok = await runOnce(app, 'ok', { output: [{ id: 'out', address: '{diskfs}/ok.ts', options: ['-f', 'mpegts'] }] });
  t.equal(ok.status, 200);
  t.ok(existsSync(join(cli.dir, 'disk', 'ok.ts')), 'writes into the disk root');
  // the service's folder is the user's own: only the sandbox keeps the child out of it
  await runOnce(app, 'out', { output: [{ id: 'out', address: '-', options: ['-vf', `metadata=mode=print:file=${cli.dir}/outside.txt`, '-f', 'null'] }] });
  t.notOk(existsSync(join(cli.dir, 'outside.txt')), 'nothing beside the config file');
  await runOnce(app, 'read', { input: [{ id: 'in', address: join(cli.dir, 'config.json'), options: ['-f', 'u8', '-ar', '8000', '-ac', '1'] }], output: [{ id: 'out', address: '{diskfs}/leak.raw', options: ['-f', 'u8'] }] });
  const leak = existsSync(join(cli.dir, 'disk', 'leak.raw')) ? readFileSync(join(cli.dir, 'disk', 'leak.raw'), 'latin1') : '';
  t.notOk(leak.includes('pw-as-nobody-0042'), 'the config file stays unread');
});
