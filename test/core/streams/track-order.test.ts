import t from 'tap';
import type { TestLike } from '../../helpers/app.ts';
import { probeTracks, probeTracksFirst } from '../../helpers/probe.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';
import { publish } from '../../plugins/rtmp/helpers.ts';
import { ffmpeg, srtUrl, startSrtApp } from '../../plugins/srt/srt-helpers.ts';

/*
 * Issue 44.2: every reader sees video as track #0 and audio as #1, as the publisher sent them
 * (ffmpeg publishes video first), whatever the protocol pair and whenever it joins: the first
 * reader (there as the publisher starts), the first reader of another format made seconds later
 * (a remux started mid-GOP), and a late reader (the view's cached headers and GOP).
 */

const BOTH = ['video', 'audio'];

async function startBoth(t: TestLike) {
  const app = await startSrtApp(t, { token: '', passphrase: '' }, { rtmp: { enable: true, address: '127.0.0.1:0' } });
  const rtmp = app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService;
  return Object.assign(app, { rtmpBase: `rtmp://127.0.0.1:${rtmp.ports().rtmp}` });
}

const srtPublish = (t: TestLike, url: string) => ffmpeg(t, ['-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10',
  '-re', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100', '-t', '60',
  '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '20', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '32k',
  '-f', 'mpegts', url], 90_000);

const seconds = (s: number) => new Promise((r) => setTimeout(r, s * 1000));

t.test('published over RTMP: read over RTMP and SRT, first and late', async (t) => {
  const app = await startBoth(t);
  const rtmp = `${app.rtmpBase}/live/order`;
  const srt = srtUrl(app.srtPort, 'live/order', '');
  publish(t, rtmp, { seconds: 60, extra: ['-g', '20'] });
  t.same(await probeTracksFirst(t, rtmp), BOTH, 'the first RTMP reader: video #0, audio #1');
  t.same(await probeTracksFirst(t, srt), BOTH, 'the first SRT reader (the remux made now): video #0, audio #1');
  await seconds(4);
  t.same(await probeTracks(t, rtmp), BOTH, 'a late RTMP reader (cached headers and GOP): video #0, audio #1');
  t.same(await probeTracks(t, srt), BOTH, 'a late SRT reader: video #0, audio #1');
});

t.test('published over SRT: read over SRT and RTMP, first and late', async (t) => {
  const app = await startBoth(t);
  const rtmp = `${app.rtmpBase}/live/back`;
  const srt = srtUrl(app.srtPort, 'live/back', '');
  srtPublish(t, srtUrl(app.srtPort, 'live/back,mode:publish', ''));
  t.same(await probeTracksFirst(t, srt), BOTH, 'the first SRT reader: video #0, audio #1');
  await seconds(3.5);
  // the first RTMP reader makes the MPEG-TS -> FLV remux now, in the middle of a GOP
  t.same(await probeTracks(t, rtmp), BOTH, 'the first RTMP reader, seconds in (the remux made mid-GOP): video #0, audio #1');
  await seconds(2);
  t.same(await probeTracks(t, rtmp), BOTH, 'a late RTMP reader (the remux\'s cached headers and GOP): video #0, audio #1');
  t.same(await probeTracks(t, srt), BOTH, 'a late SRT reader: video #0, audio #1');
});

t.test('published over SRT: an RTMP reader there from the start', async (t) => {
  const app = await startBoth(t);
  const rtmp = `${app.rtmpBase}/live/early`;
  srtPublish(t, srtUrl(app.srtPort, 'live/early,mode:publish', ''));
  t.same(await probeTracksFirst(t, rtmp), BOTH, 'the first RTMP reader: video #0, audio #1');
});
