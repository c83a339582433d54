import t from 'tap';
import { join } from 'node:path';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { portRange } from '../helpers.ts';
import { AUDIO_FRAME, dts, steps } from './continuity.ts';
import { makeClip } from './media.ts';

/*
 * `mismatch: refuse`: matching items are copied (no encoder) into one stream; without `loop` the
 * sequence ends after the last item and the relay's error frame keeps the output going.
 */

const HLS = ['-c', 'copy', '-f', 'hls', '-hls_time', '1', '-hls_list_size', '0',
  '-hls_segment_filename', '{memfs}/cp_%04d.ts', '-method', 'PUT'];

t.test('playlist with refuse: copied items, one timeline, the error frame after the end', async (t) => {
  const [min, max] = await portRange(4);
  const app = await startApp(t, {
    config: { playout: { enable: true, min_port: min, max_port: max }, storage: { memory: { auth: { enable: false } } } },
  });
  const v = join(app.dir, 'disk', 'v');
  await Promise.all([makeClip(v, 'a.mp4', 2), makeClip(v, 'b.mp4', 3), makeClip(v, 'c.mp4', 4)]);
  const items = [{ source: '/v/a.mp4' }, { source: '/v/b.mp4' }, { source: '/v/c.mp4', in: 1, out: 3 }];
  t.equal((await app.request('PUT', '/api/v3/playlist/cp', { body: { items, loop: false, mismatch: 'refuse' } })).status, 200);
  const proc = {
    id: 'cp', autostart: true, input: [{ id: 'in', address: 'playlist:cp', options: [] }],
    output: [{ id: 'hls', address: '{memfs}/cp.m3u8', options: HLS }],
  };
  t.equal((await app.request('POST', '/api/v3/process', { body: proc })).status, 200);
  const status = () => app.request('GET', '/api/v3/process/cp/playout/in/status');
  await waitFor(async () => (await app.request('GET', '/api/v3/process/cp/state')).body.playlist?.in.played === 3, { what: 'three items played', timeout: 60_000 });
  await waitFor(async () => (await status()).body.looping === true, { what: 'the error frame after the last item', timeout: 30_000 });
  const state = (await app.request('GET', '/api/v3/process/cp/state')).body;
  t.equal(state.exec, 'running', 'the process runs on');
  t.match(state.playlist.in, { current: null, next: null, skipped: 0 }, 'nothing current, nothing next');
  await new Promise((r) => setTimeout(r, 2000));
  t.equal((await app.request('PUT', '/api/v3/process/cp/command', { body: { command: 'stop' } })).status, 200);
  await waitFor(async () => (await app.request('GET', '/api/v3/process/cp/state')).body.exec === 'finished', { what: 'stopped', timeout: 30_000 });
  const list = (await app.request('GET', '/memfs/cp.m3u8')).text.split('\n').filter((l) => l && !l.startsWith('#'));
  const all = Buffer.concat(await Promise.all(list.map(async (n) => Buffer.from(await (await fetch(`${app.url}/memfs/${n.replace(/^.*\//, '')}`)).arrayBuffer()))));
  const video = steps(await dts(all, 'v'));
  t.equal(video.back, 0, 'video never goes back');
  t.ok(video.max <= 1 / 25 + 0.002, `video: largest step ${video.max.toFixed(3)} s, also into the error frame`);
  const audio = steps(await dts(all, 'a'));
  t.equal(audio.back, 0, 'audio never goes back');
  t.ok(audio.max < 2 * AUDIO_FRAME, `audio: largest step ${audio.max.toFixed(4)} s (one AAC frame ${AUDIO_FRAME.toFixed(4)} s): no hole at a join`);
});
