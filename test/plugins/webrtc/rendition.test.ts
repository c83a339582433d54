import t from 'tap';
import { fileURLToPath } from 'node:url';
import { renditionFor } from '../../../plugins/webrtc/rendition.ts';
import { FIXED_RUNGS, withFixedLadder } from '../llhls/fixtures/fixed-ladder.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg } from '../srt/srt-helpers.ts';
import { ndcViewer, SOURCE, startWebrtcApp, withMedia } from './helpers.ts';

/*
 * A WHEP viewer asks for a rendition of a stream with an adaptive-bitrate ladder (issue 48.2):
 * `?rendition=<rung>`, `source`, or nothing (the top rung). The ladder is a stand-in of the ladders
 * plugin (`../llhls/fixtures/fixed-ladder.ts`), whose renditions the test publishes over RTMP.
 */
const fixedLadder = fileURLToPath(new URL('../llhls/fixtures/fixed-ladder.ts', import.meta.url));

t.test('the rendition a viewer asks for, by the rules', async (t) => {
  const ladders = { renditionsOf: (s: string) => (s === 'live/src' ? FIXED_RUNGS : undefined) };
  t.equal(renditionFor('live/src', undefined, ladders), 'live/src/hi', 'nothing asked: the top rung');
  t.equal(renditionFor('live/src', '', ladders), 'live/src/hi');
  t.equal(renditionFor('live/src', 'lo', ladders), 'live/src/lo');
  t.equal(renditionFor('live/src', 'source', ladders), 'live/src', 'the stream itself');
  t.equal(renditionFor('live/other', undefined, ladders), 'live/other', 'no ladder: the stream');
  t.equal(renditionFor('live/src', undefined, undefined), 'live/src', 'no ladders plugin');
  const copying = { renditionsOf: () => [{ ...FIXED_RUNGS[0]!, copy: true }, FIXED_RUNGS[1]!] };
  t.equal(renditionFor('live/src', undefined, copying), 'live/src', 'a top rung that copies the source: the source, no ladder started');
  t.throws(() => renditionFor('live/src', 'nope', ladders), { status: 404, errorCode: 'WEBRTC_NO_RENDITION', details: [/its renditions: source, hi, lo/] } as unknown as Error);
  t.throws(() => renditionFor('live/other', 'lo', ladders), { status: 404, details: [/it has no ladder/] } as unknown as Error);
  t.throws(() => renditionFor('live/src', ['lo', 'hi'], ladders), { status: 404 } as unknown as Error, 'a repeated query key is no rung');
});

t.test('WHEP plays the asked rendition of a laddered stream', async (t) => {
  const app = await startWebrtcApp(t, {}, { plugins: withFixedLadder(fixedLadder) });
  ffmpeg(t, [...SOURCE, '-f', 'flv', `${app.rtmpBase}/live/src/hi`], 120_000);
  ffmpeg(t, [...SOURCE, '-f', 'flv', `${app.rtmpBase}/live/src/lo`], 120_000);
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body?.length === 2, { timeout: 30_000, what: 'both renditions published' });
  const streams = async () => ((await app.request('GET', '/api/v3/webrtc')).body as { stream: string }[]).map((s) => s.stream).sort();
  const top = await ndcViewer(t, app.url, 'live/src');
  t.equal(top.status, 201, 'a viewer of the stream');
  t.same(await streams(), ['live/src/hi'], 'plays the top rung');
  const lo = await ndcViewer(t, app.url, 'live/src?rendition=lo');
  t.equal(lo.status, 201);
  t.same(await streams(), ['live/src/hi', 'live/src/lo'], 'the asked rendition');
  await withMedia(t, app.url, 'live/src?rendition=lo', [lo], 50);
  t.pass('video of the lo rendition');
  t.equal((await ndcViewer(t, app.url, 'live/src?rendition=nope')).status, 404, 'a rung the ladder does not have: 404');
});
