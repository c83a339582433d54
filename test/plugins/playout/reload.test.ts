import t from 'tap';
import { startApp, type TestApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { lastColour, portRange, solidImage } from './helpers.ts';

/*
 * A config reload closes the plugin: its relays stop and free their ports; the new app's relay for
 * the restored process takes the lowest port again and keeps the error frame set before.
 */

const proc = {
  id: 'nosrc', reconnect: true, reconnect_delay_seconds: 1, autostart: true,
  // nothing listens on port 9: the relay sends its error frame from the start
  input: [{ id: 'in', address: 'playout:rtmp://127.0.0.1:9/none', options: [] }],
  output: [{
    id: 'hls', address: '{memfs}/nosrc.m3u8',
    // epoch numbering: segment names of the run after the reload differ from those before
    options: ['-c', 'copy', '-f', 'hls', '-hls_time', '1', '-hls_list_size', '4', '-hls_start_number_source', 'epoch',
      '-hls_segment_filename', '{memfs}/nosrc_%d.ts', '-method', 'PUT'],
  }],
};
const isRed = ([r, g, b]: number[]) => r! > 180 && g! < 80 && b! < 80;

async function newest(app: TestApp, seen: Set<string>): Promise<Buffer | undefined> {
  const r = await app.request('GET', '/memfs/nosrc.m3u8');
  const names = r.status === 200 ? r.text.split('\n').filter((l) => l && !l.startsWith('#') && !seen.has(l)) : [];
  if (!names.length) return undefined;
  const s = await fetch(`${app.url}/memfs/${names[names.length - 1]!.replace(/^.*\//, '')}`);
  return s.status === 200 ? Buffer.from(await s.arrayBuffer()) : undefined;
}

t.test('config reload: ports released and taken again, the error frame kept', async (t) => {
  const [min, max] = await portRange(4);
  const app = await startApp(t, { config: { playout: { enable: true, min_port: min, max_port: max }, storage: { memory: { auth: { enable: false } } } } });
  const api = '/api/v3/process/nosrc/playout/in';
  t.equal((await app.request('POST', '/api/v3/process', { body: proc })).status, 200);
  await waitFor(async () => (await app.request('GET', `${api}/status`)).body?.looping === true, { what: 'the relay looping without source', timeout: 30_000 });
  const red = await solidImage('red');
  t.equal((await app.request('POST', `${api}/errorframe/red.png`, { raw: red, headers: { 'content-type': 'application/octet-stream' } })).status, 204);
  await waitFor(async () => {
    const seg = await newest(app, new Set());
    return seg && isRed(await lastColour(seg));
  }, { what: 'the red error frame in HLS', timeout: 40_000 });

  const seen = new Set((await app.request('GET', '/memfs/nosrc.m3u8')).text.split('\n'));
  const before = app.service.app;
  t.equal((await app.request('GET', '/api/v3/config/reload')).status, 200);
  await waitFor(() => app.service.app !== before, { what: 'a new app' });
  const state = await waitFor(async () => {
    const s = (await app.request('GET', '/api/v3/process/nosrc/state')).body;
    return s.exec === 'running' ? s : undefined;
  }, { what: 'the process running again', timeout: 30_000 });
  t.ok(state.command.includes(`tcp://127.0.0.1:${min}`), 'the old relay freed the lowest port, the new one took it');
  await waitFor(async () => {
    const seg = await newest(app, seen);
    return seg && isRed(await lastColour(seg));
  }, { what: 'the red error frame after the reload', timeout: 40_000 });
  t.pass('the error frame set before the reload is used by the new relay');
});
