import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';
import { laddersRef, type LaddersService } from '../../../plugins/ladders/api.ts';
import { publish } from './helpers.ts';

const run = promisify(execFile);

/*
 * A pattern ladder follows the streams it matches: a publish makes its process, a rendition read
 * runs it (and is matched by no pattern again, not even `**`), the stream's end removes the process
 * after `linger_seconds`.
 */

t.test('a pattern ladder follows a stream; its renditions get no ladder', async (t) => {
  const app = await startApp(t, {
    config: { rtmp: { enable: true, address: '127.0.0.1:0' }, ladders: { enable: true, linger_seconds: 2, ladders: [{ id: 'all', pattern: 'live/**', rungs: ['240p'], idle_seconds: 2 }] } },
  });
  const rtmp = app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService;
  const ladders = app.service.app.kernel.services.resolve(laddersRef) as LaddersService;
  const base = `rtmp://127.0.0.1:${rtmp.ports().rtmp}`;
  const processes = async () => ((await app.request('GET', '/api/v3/process?reference=ladders')).body as { id: string }[]).map((p) => p.id).sort();

  t.same(await processes(), [], 'no process before a matching stream');
  t.match(ladders.renditionsOf('live/p1'), [{ name: 'live/p1/240p', rung: '240p', height: 240, videoBitrate: 400_000, audioBitrate: 64_000, copy: false }]);
  t.equal(ladders.renditionsOf('live/p1/240p'), undefined, 'a rendition has no ladder');
  t.equal(ladders.renditionsOf('other/p1'), undefined, 'a stream no ladder matches');

  const pub = publish(t, `${base}/live/p1`);
  await waitFor(async () => (await processes()).includes('ladder:live_p1'), { what: 'the process of live/p1' });
  const view = await app.request('GET', '/api/v3/ladders/all');
  t.match(view.body.processes, [{ id: 'ladder:live_p1', stream: 'live/p1' }], 'the ladder lists it');

  // a reader of the rendition runs the ladder; its publish is no new stream for the pattern
  const { stdout } = await run('ffprobe', ['-v', 'error', '-rw_timeout', '20000000', '-select_streams', 'v:0', '-show_entries', 'stream=height', '-of', 'csv=p=0',
    `${base}/live/p1/240p`], { timeout: 40_000 });
  t.equal(stdout.trim(), '240', 'the rendition reads at its size');
  t.same(await processes(), ['ladder:live_p1'], 'no ladder of live/p1/240p');

  await pub.stop();
  await waitFor(async () => (await processes()).length === 0, { what: 'the process removed after the linger time', timeout: 20_000 });
  t.same((await app.request('GET', '/api/v3/ladders/all')).body.processes, [], 'none left');
});
