import t from 'tap';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { eventsRef, type CoreEvent, type EventsService } from '../../../../sdk/index.ts';
import { pidsWith, portRange } from '../helpers.ts';
import { AUDIO_FRAME, dts, steps } from './continuity.ts';
import { makeClip } from './media.ts';

/*
 * A `playlist:chan` input into HLS in memfs (real ffmpeg): five mixed files (durations, one of
 * another size, one without audio, one cut with in/out) normalised by the relay into one stream;
 * the playlist edited while it plays (next item, same process ffmpeg), a file deleted after its
 * insert skipped with its event, and the whole HLS timeline checked with ffprobe: no step back, no
 * video step over one frame at any join.
 */

const FRAME = 1 / 25;
const HLS = ['-c', 'copy', '-f', 'hls', '-hls_time', '1', '-hls_list_size', '0',
  '-hls_segment_filename', '{memfs}/ch_%04d.ts', '-method', 'PUT'];
const proc = {
  id: 'ch', reconnect: true, reconnect_delay_seconds: 1, autostart: true,
  input: [{ id: 'in', address: 'playlist:chan', options: [] }],
  output: [{ id: 'hls', address: '{memfs}/ch.m3u8', options: HLS }],
};
const format = { width: 320, height: 240, fps: 25, video_bitrate_kbit: 300, audio_bitrate_kbit: 64 };

t.test('playlist: one continuous HLS stream across items, edits and a missing file', async (t) => {
  const [min, max] = await portRange(4);
  const app = await startApp(t, {
    config: { playout: { enable: true, min_port: min, max_port: max }, storage: { memory: { auth: { enable: false } } } },
  });
  const events = app.service.app.kernel.services.resolve(eventsRef) as EventsService;
  const seen: CoreEvent[] = [];
  const sub = events.subscribe({ types: ['playlist.item.started', 'playlist.item.skipped'] }, undefined, (e) => seen.push(e));
  t.teardown(() => sub.close());
  const v = join(app.dir, 'disk', 'v');
  await Promise.all([
    makeClip(v, 'a.mp4', 2), makeClip(v, 'b.mp4', 3), makeClip(v, 'c.mp4', 1.5, '480x270'),
    makeClip(v, 'd.mp4', 2, '320x240', false), makeClip(v, 'e.mp4', 4), makeClip(v, 'f.mp4', 2), makeClip(v, 'g.mp4', 2),
  ]);
  const items = [{ source: '/v/a.mp4' }, { source: '/v/b.mp4' }, { source: '/v/c.mp4' }, { source: '/v/d.mp4' }, { source: '/v/e.mp4', in: 1, out: 3 }];
  t.equal((await app.request('PUT', '/api/v3/playlist/chan', { body: { items, loop: true, format } })).status, 200);
  t.equal((await app.request('POST', '/api/v3/process', { body: proc })).status, 200);

  const started = (item: string, after = 0) => seen.filter((e, i) => i >= after && e.type === 'playlist.item.started' && e.payload.item === item).length > 0;
  await waitFor(() => started('/v/e.mp4'), { what: 'the fifth item started', timeout: 60_000 });
  const state = (await app.request('GET', '/api/v3/process/ch/state')).body;
  t.equal(state.exec, 'running');
  t.match(state.playlist, { in: { name: 'chan', current: '/v/e.mp4', index: 4, next: '/v/a.mp4', skipped: 0 } }, 'state.playlist: current and next');
  t.ok(state.playlist.in.position >= 0, 'and the position');
  t.ok(Array.isArray(state.command) && state.command.includes(`tcp://127.0.0.1:${min}`), 'the reference fields are there');
  const gql = await app.request('POST', '/api/graph/query', { body: { query: '{ playlistState(id: "ch", input: "in") { name current next played } }' } });
  t.equal(gql.body?.data?.playlistState?.name, 'chan', `GraphQL playlistState: ${gql.text.slice(0, 200)}`);
  const pids = pidsWith(`tcp://127.0.0.1:${min}`);
  t.equal(pids.length, 1, 'one process ffmpeg');

  // edited while running: the next item comes from the new list; g is deleted after its insert
  const mark = seen.length;
  const edit = { items: [{ source: '/v/f.mp4' }, { source: '/v/g.mp4' }, { source: '/v/a.mp4' }], loop: true, format };
  t.equal((await app.request('PUT', '/api/v3/playlist/chan', { body: edit })).status, 200);
  await rm(join(v, 'g.mp4'));
  await waitFor(() => seen.some((e, i) => i >= mark && e.type === 'playlist.item.started'), { what: 'the next item', timeout: 30_000 });
  const next = seen.slice(mark).find((e) => e.type === 'playlist.item.started')!;
  t.ok(['/v/f.mp4', '/v/g.mp4', '/v/a.mp4'].includes(String(next.payload.item)), `the next item is from the edited list (${String(next.payload.item)})`);
  await waitFor(() => seen.some((e, i) => i >= mark && e.type === 'playlist.item.skipped' && e.payload.item === '/v/g.mp4'), { what: 'g skipped', timeout: 30_000 });
  const skip = seen.find((e) => e.type === 'playlist.item.skipped')!;
  t.match(skip.subject, { process: 'ch', playlist: 'chan' }, 'the skip event names the process and the playlist');
  t.ok(String(skip.payload.reason).length > 0, `with a reason: ${String(skip.payload.reason)}`);
  const afterSkip = seen.indexOf(skip);
  await waitFor(() => started('/v/a.mp4', afterSkip) || started('/v/f.mp4', afterSkip), { what: 'playing on after the skip', timeout: 30_000 });
  t.same(pidsWith(`tcp://127.0.0.1:${min}`), pids, 'the same process ffmpeg: never restarted');
  const st = (await app.request('GET', '/api/v3/process/ch/state')).body;
  t.equal(st.exec, 'running', 'still running');
  t.ok(st.playlist.in.skipped >= 1, 'state counts the skip');

  // the whole HLS timeline
  t.equal((await app.request('PUT', '/api/v3/process/ch/command', { body: { command: 'stop' } })).status, 200);
  await waitFor(async () => (await app.request('GET', '/api/v3/process/ch/state')).body.exec === 'finished', { what: 'stopped', timeout: 30_000 });
  const list = (await app.request('GET', '/memfs/ch.m3u8')).text.split('\n').filter((l) => l && !l.startsWith('#'));
  t.ok(list.length >= 8, `${list.length} segments`);
  const parts = await Promise.all(list.map(async (n) => Buffer.from(await (await fetch(`${app.url}/memfs/${n.replace(/^.*\//, '')}`)).arrayBuffer())));
  const all = Buffer.concat(parts);
  const video = steps(await dts(all, 'v'));
  t.equal(video.back, 0, 'video timestamps never go back');
  t.ok(video.max <= FRAME + 0.002, `video: largest step ${video.max.toFixed(3)} s (one frame is ${FRAME} s)`);
  const at = await dts(all, 'a');
  const vt = await dts(all, 'v');
  t.ok(Math.abs(vt.at(-1)! - at.at(-1)!) < 0.5, `A/V in sync at the end: video ${vt.at(-1)} s, audio ${at.at(-1)} s`);
  const audio = steps(at);
  t.equal(audio.back, 0, 'audio timestamps never go back');
  // AAC frames are 1024/48000 s: a step of less than two means no hole of a whole audio frame (under one video frame)
  t.ok(audio.max < 2 * AUDIO_FRAME, `audio: largest step ${audio.max.toFixed(4)} s (one AAC frame ${AUDIO_FRAME.toFixed(4)} s): no hole at a join`);
});
