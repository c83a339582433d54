import t from 'tap';
import { mkdtemp, mkdir, writeFile, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv } from '../../helpers/app.ts';
import { runCli } from '../../helpers/cli.ts';
import { waitFor } from '../../helpers/wait.ts';
import { MEDIA, view } from './viewer.ts';

const hlsSummary = async (url: string) => (await (await fetch(`${url}/api/v3/session?collectors=hls,hlsingress`)).json()) as any;

t.test('the session history survives a restart of the service (a new OS process)', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'core-sessions-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'disk'));
  const config = {
    address: '127.0.0.1:0', db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') }, memory: { auth: { enable: false } } },
    log: { level: 'info' }, update_check: false,
    sessions: { ip_ignorelist: [], session_timeout_sec: 1, persist: true, persist_interval_sec: 0 },
  };
  await writeFile(join(dir, 'config.json'), JSON.stringify(config));
  const args = ['--config', join(dir, 'config.json')];

  const first = await runCli(t, args, cleanEnv(), dir);
  for (const [name, body] of [['p.m3u8', MEDIA], ['p0.ts', 'x'.repeat(1000)], ['p1.ts', 'y'.repeat(1000)]] as const) {
    t.ok((await fetch(`${first.url}/memfs/${name}`, { method: 'PUT', body })).ok, `PUT ${name}`);
  }
  const { id } = await view(first.url, '/memfs/p.m3u8');
  t.match(id, /^[2-9A-HJ-NP-Za-km-z]{22}$/);
  await waitFor(async () => (await hlsSummary(first.url)).hls.summary.sessions === 1, { timeout: 20_000, what: 'the viewer closed after 1 s idle' });
  first.child.kill('SIGTERM');
  t.equal(await first.exited, 0, 'clean stop');

  const stored = JSON.parse(await readFile(join(dir, 'db', 'sessions', 'hls.json'), 'utf8'));
  const entry = stored.sessions['/memfs/p.m3u8:unknown:p'];
  t.match(entry, { location: '/memfs/p.m3u8', peer: 'unknown', reference: 'p', total_sessions: 1 }, 'reference 10.2 layout');
  t.ok(entry.total_txbytes > 2000, 'playlist and segment bytes with headers');
  const ingress = JSON.parse(await readFile(join(dir, 'db', 'sessions', 'hlsingress.json'), 'utf8'));
  t.equal(ingress.sessions['/memfs/p.m3u8:unknown:p'].total_rxbytes, MEDIA.length + 2000, 'uploads counted for their playlist at stop');

  const second = await runCli(t, args, cleanEnv(), dir);
  const s = await hlsSummary(second.url);
  t.equal(s.hls.summary.sessions, 1, 'history read back');
  t.equal(s.hls.summary.reference.p.sessions, 1);
  t.equal(s.hlsingress.summary.sessions, 1);
});
