import t from 'tap';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../../helpers/wait.ts';
import { startRtmpApp, publish } from '../rtmp/helpers.ts';

/*
 * A recording's segments stay where they were written: a PUT that moved a recording with segments
 * to another filesystem or prefix left its spans pointing at the old place (404s, a TS export 500
 * "segment is missing", a DELETE that left the files). And a deleted recording leaves no index
 * document behind.
 */
t.test('filesystem and prefix are fixed while a recording has segments; a delete removes its files and its index document', async (t) => {
  const app = await startRtmpApp(t, {}, { recordings: { enable: true } });
  t.equal((await app.request('PUT', '/api/v3/recordings/cam', { body: { stream: 'live/place', segment_seconds: 1 } })).status, 201);
  t.equal((await app.request('PUT', '/api/v3/recordings/cam', { body: { stream: 'live/place', segment_seconds: 1, prefix: '/elsewhere' } })).status, 200,
    'no segments yet: it may move');
  const pub = publish(t, `${app.base}/live/place`, { seconds: 4 });
  t.equal(await pub.done, 0, `the publish ran (${pub.stderr()})`);
  const v = await waitFor(async () => {
    const r = (await app.request('GET', '/api/v3/recordings/cam')).body;
    return !r.recording && r.storing === 0 && r.segments > 0 ? r : undefined;
  }, { what: 'segments stored' });
  const files = async () => ((await app.request('GET', '/api/v3/fs/disk?glob=/elsewhere/cam/**')).body as { name: string }[]).length;
  t.equal(await files(), v.segments, 'the files are in the new place');

  for (const body of [{ prefix: '/recordings' }, { filesystem: 'mem' }]) {
    const r = await app.request('PUT', '/api/v3/recordings/cam', { body: { stream: 'live/place', segment_seconds: 1, ...body } });
    t.equal(r.status, 409, `moved by ${JSON.stringify(body)}`);
    t.equal(r.body.code, 409);
    t.match(r.body.details, [/has segments in disk:\/elsewhere/]);
  }
  t.equal((await app.request('PUT', '/api/v3/recordings/cam', { body: { stream: 'live/place', segment_seconds: 2, prefix: '/elsewhere/' } })).status, 200,
    'other settings change; the same prefix written differently is the same place');
  const after = (await app.request('GET', '/api/v3/recordings/cam')).body;
  t.equal(after.segments, v.segments, 'the index kept');
  const cut = await fetch(`${app.url}/api/v3/recordings/cam/get?start=${after.spans[0].start_ms}&duration=1&format=ts`);
  t.equal(cut.status, 200, 'a cut still reads them');
  await cut.arrayBuffer();

  const doc = join(app.dir, 'db', 'plugins', 'recordings', 'index-cam.json');
  t.ok(existsSync(doc), 'its index document');
  t.equal((await app.request('DELETE', '/api/v3/recordings/cam')).status, 204);
  t.equal(await files(), 0, 'its segments deleted');
  t.notOk(existsSync(doc), 'its index document deleted');
  t.equal((await app.request('PUT', '/api/v3/recordings/cam', { body: { stream: 'live/place', filesystem: 'mem' } })).status, 201, 'the name starts anew anywhere');
  t.equal((await app.request('GET', '/api/v3/recordings/cam')).body.segments, 0);
});
