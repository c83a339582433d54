import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { startRtmpApp, publish } from './helpers.ts';
import { waitFor } from '../../helpers/wait.ts';
import { placeholdersRef, type PlaceholderRegistry } from '../../../sdk/index.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';

/** A process that pulls the published stream through `{rtmp,name=..}` into HLS in memfs. */
const pullToHls = {
  id: 'pull',
  reconnect: true,
  reconnect_delay_seconds: 1,
  autostart: true,
  input: [{ id: 'in', address: '{rtmp,name=live/cam.stream}', options: [] }],
  output: [{
    id: 'hls', address: '{memfs}/{processid}.m3u8',
    options: ['-c', 'copy', '-f', 'hls', '-hls_time', '1', '-hls_list_size', '3', '-hls_segment_filename', '{memfs}/{processid}_%04d.ts', '-method', 'PUT'],
  }],
};

type App = Awaited<ReturnType<typeof startApp>>;
const segments = async (app: App) =>
  ((await app.request('GET', '/api/v3/fs/mem')).body as { name: string }[]).filter((f) => /^\/pull_\d{4}\.ts$/.test(f.name));

t.test('{rtmp,name=..}: the reference URL with the bound port, app and token', async (t) => {
  const app = await startRtmpApp(t, { app: '/live', token: 'a&b' });
  const ph = app.service.app.kernel.services.resolve(placeholdersRef) as PlaceholderRegistry;
  const def = ph.get('rtmp')!;
  t.equal(def.value('input'), `rtmp://127.0.0.1:${app.rtmp.ports().rtmp}/live/{name}`, 'a command that does not run: no token');
  t.equal(def.value('input', { processId: 'p', token: 'T'.repeat(32) }), `rtmp://127.0.0.1:${app.rtmp.ports().rtmp}/live/{name}?token=${'T'.repeat(32)}`,
    'a run: its own token, never rtmp.token');
  t.same(def.contexts, ['address']);
  const plain = await startRtmpApp(t, { address: ':0' });
  const plainPh = plain.service.app.kernel.services.resolve(placeholdersRef) as typeof ph;
  t.match(plainPh.get('rtmp')!.value('input', { processId: 'p', token: 'T'.repeat(32) }),
    /^rtmp:\/\/localhost:\d+\/\{name\}$/, 'every interface: localhost; app / and no token add nothing');
});

t.test('a process turns the published stream into HLS in memfs through {rtmp}; it comes back after a restart', async (t) => {
  const app = await startRtmpApp(t, { token: 'tk' }, { storage: { memory: { auth: { enable: false } } } });
  publish(t, `${app.base}/live/cam.stream?token=tk`, { seconds: 120 });
  t.equal((await app.request('POST', '/api/v3/process', { body: pullToHls })).status, 200);
  await waitFor(async () => (await segments(app)).length >= 2, { what: 'HLS segments in memfs', timeout: 30_000 });
  const playlist = await app.request('GET', '/memfs/pull.m3u8');
  t.match(playlist.text, /^#EXTM3U/);
  t.equal(app.rtmp.channels()[0]!.players, 1, 'the process is the stream\'s player');

  // restart: same folder (config and process db), a new RTMP port (the config says 0)
  await app.service.close();
  const again = await startApp(t, { dir: app.dir });
  const rtmp = again.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService;
  publish(t, `rtmp://127.0.0.1:${rtmp.ports().rtmp}/live/cam.stream?token=tk`, { seconds: 120 });
  await waitFor(async () => (await segments(again)).length >= 2, { what: 'HLS segments after the restart', timeout: 30_000 });
  const state = (await again.request('GET', '/api/v3/process/pull/state')).body;
  t.equal(state.exec, 'running');
  t.match(state.command.join(' '), new RegExp(`rtmp://127\\.0\\.0\\.1:${rtmp.ports().rtmp}/live/cam\\.stream\\?token=\\*\\*\\*`), 'the placeholder follows the new port (the run\'s token shown as ***)');
  t.notOk(state.command.join(' ').includes('token=tk'), 'with the run\'s token, not rtmp.token');
});
