import t from 'tap';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp } from '../../helpers/app.ts';
import { startRtmpApp, publish, play } from './helpers.ts';
import { waitFor } from '../../helpers/wait.ts';
import { hold, lifetime } from './attack-kit.ts';

/** A self-signed certificate for 127.0.0.1 in a temp folder. */
async function selfSigned(t: { teardown(fn: () => unknown): void }): Promise<{ cert_file: string; key_file: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'rtmp-tls-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  await new Promise<void>((resolve, reject) => execFile('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
  ], (err) => (err ? reject(err) : resolve())));
  return { cert_file: cert, key_file: key };
}

t.test('RTMPS: publish and play over TLS with the service certificate', async (t) => {
  const files = await selfSigned(t);
  const app = await startRtmpApp(t, { enable_tls: true, address_tls: '127.0.0.1:0', token: 'tk' }, { tls: { enable: true, ...files } });
  const port = app.rtmp.ports().rtmps!;
  t.ok(port > 0 && port !== app.rtmp.ports().rtmp, 'a port of its own');
  const url = `rtmps://127.0.0.1:${port}/live/secure.stream?token=tk`;
  publish(t, url, { seconds: 60 });
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body.length === 1, { what: 'listed' });
  t.same((await app.request('GET', '/api/v3/rtmp')).body, [{ name: '/live/secure.stream' }]);
  const p = play(t, url, { frames: 10 });
  t.equal(await p.done, 0, 'played over rtmps');
  t.ok(p.frames().length >= 10);
  const plain = play(t, `${app.base}/live/secure.stream?token=tk`, { frames: 5 });
  t.equal(await plain.done, 0, 'a stream published over RTMPS plays over plain RTMP too');
  t.match(JSON.stringify((await app.request('GET', '/api/v3/log')).body), /rtmp publish started.*protocol=\\"rtmps\\"/);
});

t.test('a busy RTMPS port fails the boot naming rtmp.address_tls', async (t) => {
  const files = await selfSigned(t);
  const port = await new Promise<number>((resolve) => {
    const s: Server = createServer().listen(0, '127.0.0.1', () => resolve((s.address() as { port: number }).port));
    t.teardown(() => new Promise((r) => s.close(r)));
  });
  await t.rejects(startApp(t, { config: { tls: { enable: true, ...files }, rtmp: { enable: true, address: '127.0.0.1:0', enable_tls: true, address_tls: `127.0.0.1:${port}` } } }),
    { message: /rtmp\.address_tls '127\.0\.0\.1:\d+': cannot listen, the port is already in use/ });
});

t.test('RTMPS: an unfinished TLS handshake is closed by rtmp.handshake_timeout_seconds; the caps count RTMPS too', async (t) => {
  const files = await selfSigned(t);
  const app = await startRtmpApp(t, { enable_tls: true, address_tls: '127.0.0.1:0', handshake_timeout_seconds: 1, max_connections_per_address: 3 }, { tls: { enable: true, ...files } });
  const { rtmp, rtmps } = app.rtmp.ports();
  const plain = hold(rtmp, 2, { localAddress: '127.0.0.2' });
  const secure = hold(rtmps!, 3, { localAddress: '127.0.0.2' });
  t.teardown(() => { plain.stop(); secure.stop(); });
  await Promise.all([plain.allClosed(), secure.allClosed()]);
  const all = [...plain.conns, ...secure.conns];
  t.equal(all.filter((c) => lifetime(c) < 1000).length, 2, 'two of five refused: three per address over both listeners');
  t.ok(secure.conns.filter((c) => lifetime(c) >= 1000).length >= 1, 'silent RTMPS connections closed by the handshake timeout');
  const log = (await app.request('GET', '/api/v3/log')).body as string[];
  t.ok(log.some((l) => l.includes('rtmp connection closed: TLS handshake failed') && l.includes('remote="127.0.0.2:')), 'logged with the remote');
});
