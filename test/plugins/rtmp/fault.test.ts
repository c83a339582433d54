import t from 'tap';
import { fileURLToPath } from 'node:url';
import { request } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { alive } from '../../helpers/net-proc.ts';
import { startRtmpApp, startRtmpCli, ffmpegsUnder, publish, play } from './helpers.ts';
import { RawRtmp, session, amf0, command, invoke, connectCommand } from './wire-kit.ts';
import { CRASH_INPUTS } from './crash-inputs.ts';
import { ingestRecorderRef, type IngestRecorder } from './fixtures/ingest-recorder.ts';

/*
 * Fault isolation (issue 27.1): an input that throws inside node-media-server's parser ends its
 * own connection, with one log line naming the remote and the reason, never the process. Before
 * the boundary in nms-adapter.ts each of these inputs made the service exit with code 1.
 */

const recorder = fileURLToPath(new URL('./fixtures/ingest-recorder.ts', import.meta.url));

t.test('each crashing input ends its own connection: the service, its ffmpeg, the API and the streams are untouched', async (t) => {
  const app = await startRtmpCli(t);
  const body = { id: 'keep', input: [{ id: 'in', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }], output: [{ id: 'out', address: '-', options: ['-f', 'null'] }], autostart: true };
  t.equal((await request(app.url, 'POST', '/api/v3/process', { body })).status, 200);
  const ffPid = await waitFor(() => { const p = ffmpegsUnder(app.child.pid!); return p.length === 1 ? p[0] : undefined; }, { what: 'the process ffmpeg running' });
  publish(t, `${app.base}/live/legit`, { seconds: 300 });
  await waitFor(async () => (await request(app.url, 'GET', '/api/v3/rtmp')).body.length === 1, { what: 'the publisher listed' });
  const player = play(t, `${app.base}/live/legit`);
  await waitFor(() => player.frames().length > 3, { what: 'the player running' });

  const remotes = new Map<string, string>();
  for (const input of CRASH_INPUTS) {
    const c = await RawRtmp.open(app.port);
    t.ok(await c.handshake(), `${input.name}: handshake`);
    remotes.set(input.name, `127.0.0.1:${c.socket.localPort}`);
    c.write(input.bytes(app.port));
    if (input.ends === false) {
      // a connect after it is answered: the input was parsed, and the connection lives on
      c.write(connectCommand(app.port, 'live'));
      t.ok(await c.waitReceived(0), `${input.name}: parsed, and the connection still served`);
      remotes.delete(input.name);
    } else {
      await Promise.race([c.closed, new Promise((r) => setTimeout(r, 15_000))]);
      t.ok(c.isClosed, `${input.name}: the server closed the connection`);
    }
    c.close();
    t.equal(app.child.exitCode, null, `${input.name}: the service lives`);
  }

  const framesAfter = player.frames().length;
  await waitFor(() => player.frames().length > framesAfter + 5, { what: 'the player still receiving' });
  t.equal(player.child.exitCode, null, 'the player never stopped');
  t.same((await request(app.url, 'GET', '/api/v3/rtmp')).body, [{ name: '/live/legit' }], 'the publisher still listed');
  t.same(ffmpegsUnder(app.child.pid!), [ffPid], 'the same ffmpeg runs on');
  t.ok(alive(ffPid), 'the process ffmpeg is alive');
  const st = await request(app.url, 'GET', '/api/v3/process/keep/state');
  t.equal(st.body.exec, 'running', 'the API answers and the process runs');

  const log = await app.log();
  for (const [name, remote] of remotes) {
    const lines = log.filter((l) => l.includes(`remote="${remote}"`) && l.includes('rtmp connection closed: protocol error'));
    t.equal(lines.length, 1, `${name}: one log line naming ${remote} and the reason`);
  }
});

t.test('a publisher or player that breaks the protocol mid-stream: end hooks once, stream unlisted, name free again', async (t) => {
  const app = await startRtmpApp(t, {}, { plugins: ['*', recorder] });
  const rec = app.service.app.kernel.services.resolve(ingestRecorderRef) as IngestRecorder;
  const port = app.rtmp.ports().rtmp;
  const truncated = () => { const s = amf0.str('publish'); s.writeUInt16BE(9000, 1); return invoke(s); };

  const pub = await RawRtmp.open(port);
  await pub.handshake();
  pub.write(session(port, 'live', 'broken.stream', 'publish'));
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body.length === 1, { what: 'published' });
  const viewer = await RawRtmp.open(port);
  await viewer.handshake();
  viewer.write(session(port, 'live', 'broken.stream', 'play'));
  await waitFor(() => rec.events.some((e) => e.hook === 'onPlay'), { what: 'playing' });

  viewer.write(invoke(command('deleteStream', 4, amf0.null(), amf0.num(1)), 0));
  viewer.write(truncated());
  await viewer.closed;
  pub.write(truncated());
  await pub.closed;
  await waitFor(() => rec.events.filter((e) => e.hook.endsWith('End')).length === 2, { what: 'both end hooks' });
  const hooksOf = (hook: string) => rec.events.filter((e) => e.hook === hook).length;
  t.same([hooksOf('onPublish'), hooksOf('onPublishEnd'), hooksOf('onPlay'), hooksOf('onPlayEnd')], [1, 1, 1, 1], 'each hook exactly once');
  t.same((await app.request('GET', '/api/v3/rtmp')).body, [], 'unlisted');

  const again = publish(t, `${app.base}/live/broken.stream`, { seconds: 60 });
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body.length === 1, { what: 'the name is free again' });
  t.equal(again.child.exitCode, null);
  const log = (await app.request('GET', '/api/v3/log')).body as string[];
  const lines = log.filter((l) => l.includes('rtmp connection closed: protocol error') && l.includes('stream="/live/broken.stream"'));
  t.equal(lines.length, 2, 'one line each for the publisher and the player, naming the stream');
});
