import t from 'tap';
import { readFile } from 'node:fs/promises';
import { streamTableRef, type FlvPacket, type IngestPeer, type StreamTable } from '../../../sdk/index.ts';
import { startApp, type TestApp, type TestLike } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { laddersRef, type LaddersService } from '../../../plugins/ladders/api.ts';
import { MEDIA_GRACE_MS } from '../../../plugins/ladders/service.ts';

/*
 * A ladder fits its source (issue 48): the rungs a source cannot feed are left out of its process
 * and of its renditions once the stream table knows what the source carries: an FLV source when
 * both codec headers came or `MEDIA_GRACE_MS` after its start with one, an MPEG-TS source at its
 * PMT. A source none of whose rungs fit has no ladder process and plays as itself. The real
 * service with sources published into its table by the test (no ffmpeg runs: the processes are
 * on demand and nobody reads them); `media-ffmpeg.test.ts` plays such a ladder.
 */

const TS = await readFile(new URL('../../fixtures/srt/h264-aac.mpegts', import.meta.url));
const RUNGS = ['240p', 'audio'];

let seq = 0;
const peer = (stream: string, protocol = 'rtmp'): IngestPeer => ({
  id: `m-${++seq}`, protocol, stream, remote: '127.0.0.1:1', params: {}, traffic: () => ({ rxBytes: 0, txBytes: 0 }),
});
const flv = (kind: FlvPacket['kind']): FlvPacket =>
  ({ kind, type: kind === 'audio-header' ? 8 : kind === 'metadata' ? 18 : 9, codec: kind === 'audio-header' ? 10 : 7, timestamp: 0, body: Buffer.from([0]) });

interface Ctx { app: TestApp; table: StreamTable; ladders: LaddersService }

async function start(t: TestLike): Promise<Ctx> {
  const app = await startApp(t, { config: { rtmp: { enable: true, address: '127.0.0.1:0' }, ladders: { enable: true } } });
  const services = app.service.app.kernel.services;
  return { app, table: services.resolve(streamTableRef) as StreamTable, ladders: services.resolve(laddersRef) as LaddersService };
}

/** Publishes `name` into the table with these FLV packets; returns its end. */
function publishFlv(c: Ctx, name: string, kinds: FlvPacket['kind'][]): () => void {
  const pub = c.table.publish(name, 'flv', peer(name), { internal: true });
  if (!pub.ok) throw new Error(pub.reason);
  for (const k of kinds) pub.handle.push(flv(k));
  return () => pub.handle.end();
}

/** The outputs of a ladder's process (its rung names), undefined when it has none. */
async function outputs(c: Ctx, id: string): Promise<string[] | undefined> {
  const r = await c.app.request('GET', `/api/v3/process/${id}/config`);
  if (r.status === 404) return undefined;
  return (r.body.output as Array<{ id: string }>).map((o) => o.id);
}

const renditions = (c: Ctx, stream: string) => c.ladders.renditionsOf(stream)?.map((r) => r.rung);

t.test('one kind of media: the other kind\'s rungs are left out after the grace time, then kept while the source is away', async (t) => {
  const c = await start(t);
  t.equal((await c.app.request('PUT', '/api/v3/ladders/vid', { body: { stream: 'live/vid', rungs: RUNGS } })).status, 201);
  t.equal((await c.app.request('PUT', '/api/v3/ladders/aud', { body: { stream: 'live/aud', rungs: ['source', ...RUNGS] } })).status, 201);
  t.same(await outputs(c, 'ladder:live_vid'), ['240p', 'audio'], 'every rung before the source is seen');

  const began = performance.now();
  const endVid = publishFlv(c, 'live/vid', ['metadata', 'video-header', 'keyframe']);
  publishFlv(c, 'live/aud', ['metadata', 'audio-header', 'frame']);
  t.same(renditions(c, 'live/vid'), ['240p', 'audio'], 'one header so far: every rung (the other may still come)');
  await waitFor(async () => (await outputs(c, 'ladder:live_vid'))?.length === 1 || undefined, { what: 'the video-only ladder fitted', timeout: 15_000 });
  t.ok(performance.now() - began >= MEDIA_GRACE_MS - 100, 'not before the grace time');
  t.same(await outputs(c, 'ladder:live_vid'), ['240p'], 'a video source: no audio-only rung');
  t.same(renditions(c, 'live/vid'), ['240p'], 'and no such rendition');
  await waitFor(async () => (await outputs(c, 'ladder:live_aud'))?.length === 1 || undefined, { what: 'the audio-only ladder fitted', timeout: 15_000 });
  t.same(await outputs(c, 'ladder:live_aud'), ['audio'], 'an audio source: no video or copy rung');
  t.same(renditions(c, 'live/aud'), ['audio']);

  const put = await c.app.request('GET', '/api/v3/process/ladder:live_vid/config');
  t.notMatch(JSON.stringify(put.body), /0:a:0"/, 'no mandatory audio map left in the command');
  t.same(put.body.input[0].options, ['-analyzeduration', '500000'], 'its input probes briefly: no audio will come');

  endVid();
  await waitFor(() => c.table.get('live/vid') === undefined || undefined, { what: 'the source gone' });
  t.same(await outputs(c, 'ladder:live_vid'), ['240p'], 'what the source carried is kept while it is away');
});

t.test('both headers or a PMT: known at once; a source no rung fits has no process and plays as itself', async (t) => {
  const c = await start(t);
  t.equal((await c.app.request('PUT', '/api/v3/ladders/ts', { body: { stream: 'live/ts', rungs: ['240p', 'audio'] } })).status, 201);
  t.equal((await c.app.request('PUT', '/api/v3/ladders/none', { body: { pattern: 'radio/*', rungs: ['240p'] } })).status, 201);

  const pub = c.table.publish('live/ts', 'mpegts', peer('live/ts', 'srt'), { internal: true });
  if (!pub.ok) throw new Error(pub.reason);
  pub.handle.push(TS.subarray(0, 188 * 64));
  t.same(c.table.get('live/ts')?.media, { video: true, audio: true, known: true }, 'the PMT tells at once');

  const end = publishFlv(c, 'radio/one', ['metadata', 'audio-header']);
  await waitFor(async () => (await outputs(c, 'ladder:radio_one')) !== undefined || undefined, { what: 'the pattern\'s process' });
  await waitFor(async () => (await outputs(c, 'ladder:radio_one')) === undefined || undefined, { what: 'the process gone once no rung fits', timeout: 15_000 });
  t.equal(renditions(c, 'radio/one'), undefined, 'no renditions: a player gets the source itself');
  const view = await c.app.request('GET', '/api/v3/ladders/none');
  t.same(view.body.processes, [], 'the ladder lists no process');
  t.same(await outputs(c, 'ladder:live_ts'), ['240p', 'audio'], 'a source with both keeps every rung');

  end();
  await waitFor(() => c.table.get('radio/one') === undefined || undefined, { what: 'the radio gone' });
  const back = publishFlv(c, 'radio/one', ['metadata', 'video-header', 'audio-header']);
  t.teardown(back);
  await waitFor(async () => JSON.stringify(await outputs(c, 'ladder:radio_one')) === '["240p"]' || undefined, { what: 'the process back once video comes', timeout: 15_000 });
  t.same(renditions(c, 'radio/one'), ['240p']);
});
