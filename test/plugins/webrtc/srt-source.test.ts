import t from 'tap';
import { placeholdersRef } from '../../../sdk/index.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg, srtUrl } from '../srt/srt-helpers.ts';
import { ndcViewer, startWebrtcApp, withMedia } from './helpers.ts';

/*
 * A WHEP viewer of an MPEG-TS stream without sound (published over SRT): the stream table has read
 * its PMT, so the feed ffmpeg starts without an audio output at once, where it was started with one,
 * failed on the missing track and was started again (a second or so before the first frame).
 */

t.test('an SRT stream without sound: one feed ffmpeg, video only, from the table\'s PMT', async (t) => {
  const app = await startWebrtcApp(t, {}, { srt: { enable: true, address: '127.0.0.1:0' }, log: { level: 'debug' } });
  const ph = app.service.app.kernel.services.resolve(placeholdersRef) as { get(n: string): { value(s: string): string } };
  const srtPort = Number(/:(\d+)\?/.exec(ph.get('srt').value('input'))![1]);
  ffmpeg(t, ['-re', '-f', 'lavfi', '-i', 'testsrc2=size=320x240:rate=25', '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency',
    '-g', '25', '-pix_fmt', 'yuv420p', '-an', '-f', 'mpegts', srtUrl(srtPort, 'live/mute,mode:publish', '')], 120_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body?.publisher?.['live/mute'] !== undefined, { timeout: 30_000, what: 'the SRT publisher' });
  const first = await ndcViewer(t, app.url, 'live/mute');
  t.equal(first.status, 201);
  const [v] = await withMedia(t, app.url, 'live/mute', [first], 50);
  t.equal(v.audio, 0, 'no audio: the stream has none');
  const lines = (await app.request('GET', '/api/v3/log?format=raw')).body as { message: string; stream?: string; audio?: boolean }[];
  const starts = lines.filter((l) => l.message === 'a WebRTC feed ffmpeg started' && l.stream === 'live/mute');
  t.same(starts.map((l) => l.audio), [false], 'one feed ffmpeg, started without audio');
  v.close();
});
