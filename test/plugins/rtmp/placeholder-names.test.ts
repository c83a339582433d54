import t from 'tap';
import { randomUUID } from 'node:crypto';
import { waitFor } from '../../helpers/wait.ts';
import { startRtmpApp, publish, play } from './helpers.ts';
import { RawRtmp, session } from './wire-kit.ts';

/*
 * Issue 26 point 2: whatever `{rtmp,name=..}` expands to is accepted, for every `rtmp.app`,
 * `/` included. With app `/` the URL has one path element (`rtmp://h:p/ID.stream?token=T`), and
 * ffmpeg then sends all of it, query included, as the `connect` app and an empty stream name.
 */

const source = { id: 'in', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] };
const flv = ['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10', '-pix_fmt', 'yuv420p', '-f', 'flv'];

for (const app of ['/', '/live']) {
  for (const token of ['', 'T0k+n/=']) {
    t.test(`rtmp.app ${app}, ${token ? 'with' : 'without'} a token: processes publish and pull restreamer-ui names through {rtmp,name=..}`, async (t) => {
      const svc = await startRtmpApp(t, { app, token });
      const id = `restreamer-ui:ingest:${randomUUID()}`;
      const name = app === '/' ? `/${id}.stream` : `${app}/${id}.stream`;
      const body = (pid: string, input: object, output: object) => ({ id: pid, autostart: true, reconnect: true, reconnect_delay_seconds: 1, input: [input], output: [output] });
      const pub = await svc.request('POST', '/api/v3/process', { body: body('pub', source, { id: 'out', address: `{rtmp,name=${id}.stream}`, options: flv }) });
      t.equal(pub.status, 200, 'the publishing process is created');
      await waitFor(async () => (await svc.request('GET', '/api/v3/rtmp')).body.some((c: { name: string }) => c.name === name), { what: `${name} listed`, timeout: 30_000 });
      t.same((await svc.request('GET', '/api/v3/rtmp')).body, [{ name }], 'GET /api/v3/rtmp lists the name');

      const pull = await svc.request('POST', '/api/v3/process', { body: body('pull', { id: 'in', address: `{rtmp,name=${id}.stream}`, options: [] }, { id: 'out', address: '-', options: ['-f', 'null'] }) });
      t.equal(pull.status, 200, 'the pulling process is created');
      await waitFor(async () => svc.rtmp.channels()[0]?.players === 1, { what: 'the puller playing', timeout: 30_000 });
      const state = await waitFor(async () => {
        const s = (await svc.request('GET', '/api/v3/process/pull/state')).body;
        return s.exec === 'running' && s.progress?.frame > 5 ? s : undefined;
      }, { what: 'the puller decoding frames', timeout: 30_000 });
      t.pass(`the puller read ${state.progress.frame} frames`);
      const log = JSON.stringify((await svc.request('GET', '/api/v3/log')).body);
      t.notMatch(log, /rtmp (publish|play) refused/, 'nothing refused');
    });
  }
}

t.test('direct ffmpeg clients: one-element URLs with and without a token, and the query kept out of the name', async (t) => {
  const svc = await startRtmpApp(t, { token: 'tk' });
  publish(t, `${svc.base}/one.stream?token=tk`, { seconds: 120 });
  await waitFor(async () => (await svc.request('GET', '/api/v3/rtmp')).body.length === 1, { what: 'listed' });
  t.same((await svc.request('GET', '/api/v3/rtmp')).body, [{ name: '/one.stream' }]);
  t.equal(await play(t, `${svc.base}/one.stream?token=tk`, { frames: 3 }).done, 0, 'played through the same one-element URL');
  t.not(await play(t, `${svc.base}/one.stream`).done, 0, 'no token: refused');
});

t.test('dangerous or ambiguous names are refused with the reason', async (t) => {
  const svc = await startRtmpApp(t);
  const port = svc.rtmp.ports().rtmp;
  for (const [name, why] of [['a\u0001b', 'control characters'], ['..', "a '.' or '..' path segment"], ['a b', 'whitespace'], ['a\\b', "a backslash or '#'"]]) {
    const c = await RawRtmp.open(port);
    await c.handshake();
    c.write(session(port, 'live', name!, 'publish'));
    await c.closed;
    const log = (await svc.request('GET', '/api/v3/log')).body as string[];
    t.ok(log.some((l) => l.includes(`rtmp publish refused: invalid stream name: ${why}`)), `${JSON.stringify(name)}: ${why}`);
  }
  t.same((await svc.request('GET', '/api/v3/rtmp')).body, []);
});
