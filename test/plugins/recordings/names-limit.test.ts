import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { startRtmpApp, publish } from '../rtmp/helpers.ts';
import { indexDocName } from '../../../plugins/recordings/service.ts';

/*
 * Issue 44 (recordings): every name the routes accept works end to end (capitals and dots used to
 * answer 500 `invalid state document name`), names they do not accept are a 400, and
 * `max_recordings` holds under concurrent creates (100 created 16 at a time made 70 of 64).
 */

/** Not reading, every segment stored. */
const stopped = (r: { recording: boolean; storing: number }) => !r.recording && r.storing === 0;

t.test('index document names: the names documents hold as they were, the others by hex, never meeting', async (t) => {
  t.equal(indexDocName('cam'), 'index-cam', 'a lowercase name keeps its document');
  t.equal(indexDocName('cam_1-x'), 'index-cam_1-x');
  t.equal(indexDocName('Cam1'), 'index--43616d31');
  t.equal(indexDocName('a.b'), 'index--612e62');
  const names = ['Cam1', 'cam1', 'CAM1', 'a.b', 'a_b', 'a-b', 'a..', 'x'.repeat(64), '2d', 'index'];
  const docs = names.map(indexDocName);
  t.equal(new Set(docs).size, names.length, 'one document per name (case matters)');
  t.ok(docs.every((d) => /^[a-z0-9][a-z0-9_-]*$/.test(d)), 'each a valid document name');
});

t.test('names with capitals and dots: created, recorded, listed, cut, kept over a reload, deleted', async (t) => {
  const app = await startRtmpApp(t, {}, { recordings: { enable: true } });
  const names = ['Cam1', 'a.b', 'X-Y_z.9'];
  for (const name of names) {
    const made = await app.request('POST', '/api/v3/recordings', { body: { name, stream: 'live/names', segment_seconds: 1 } });
    t.equal(made.status, 201, `POST ${name}: ${JSON.stringify(made.body)}`);
  }
  t.equal((await app.request('PUT', '/api/v3/recordings/cam.2', { body: { stream: 'live/names', segment_seconds: 1 } })).status, 201, 'PUT of a new dotted name');
  const all = [...names, 'cam.2'];
  const pub = publish(t, `${app.base}/live/names`, { seconds: 5 });
  await waitFor(async () => {
    const views = await Promise.all(all.map(async (n) => (await app.request('GET', `/api/v3/recordings/${n}`)).body));
    return views.every((v) => v.recording === true);
  }, { timeout: 30_000, what: 'every recording reading' });
  t.equal(await pub.done, 0, `the publish ran (${pub.stderr()})`);
  for (const name of all) {
    await waitFor(async () => stopped((await app.request('GET', `/api/v3/recordings/${name}`)).body), { what: `${name} stopped` });
    const v = (await app.request('GET', `/api/v3/recordings/${name}`)).body;
    t.ok(v.segments > 0 && v.spans.length === 1, `${name}: segments indexed (${v.segments}) in one span`);
    const res = await fetch(`${app.url}/api/v3/recordings/${name}/get?start=${v.spans[0].start_ms}&duration=2&format=ts`);
    t.equal(res.status, 200, `${name}: a cut`);
    await res.arrayBuffer();
  }
  t.same((await app.request('GET', '/api/v3/recordings')).body.map((v: { name: string }) => v.name), [...all].sort(), 'listed');
  const before = (await app.request('GET', '/api/v3/recordings/Cam1')).body.segments;
  const oldApp = app.service.app;
  t.equal((await app.request('GET', '/api/v3/config/reload')).status, 200, 'a reload (the stored settings and indexes opened again)');
  await waitFor(async () => app.service.app !== oldApp && (await app.request('GET', '/api/v3/recordings')).status === 200, { what: 'the reloaded app' });
  t.equal((await app.request('GET', '/api/v3/recordings/Cam1')).body.segments, before, 'Cam1 keeps its index');
  t.equal((await app.request('GET', '/api/v3/recordings/cam1')).status, 404, 'cam1 is another name');
  for (const name of all) t.equal((await app.request('DELETE', `/api/v3/recordings/${name}`)).status, 204, `DELETE ${name}`);
  t.same((await app.request('GET', '/api/v3/recordings')).body, [], 'none left');
});

t.test('names the routes do not accept are a 400', async (t) => {
  const app = await startApp(t, { config: { recordings: { enable: true } } });
  const bad = ['', '.hidden', '-x', '_x', 'a b', 'a/b', 'ü', 'x'.repeat(65), 'a\u0000b'];
  for (const name of bad) {
    const res = await app.request('POST', '/api/v3/recordings', { body: { name, stream: 'live/x' } });
    t.equal(res.status, 400, `POST ${JSON.stringify(name)}: 400 (${res.status})`);
    t.ok(typeof res.body?.message === 'string', 'an Error body');
  }
  for (const name of ['.hidden', '-x', 'a%20b', 'a%2Fb', '%C3%BC', 'x'.repeat(65)]) {
    const res = await app.request('PUT', `/api/v3/recordings/${name}`, { body: { stream: 'live/x' } });
    t.equal(res.status, 400, `PUT /api/v3/recordings/${name}: 400 (${res.status})`);
    t.equal((await app.request('GET', `/api/v3/recordings/${name}`)).status, 400, `GET /api/v3/recordings/${name}: 400`);
  }
});

t.test('max_recordings holds under concurrent creates; one name is created once', async (t) => {
  const app = await startApp(t, { config: { recordings: { enable: true } } });
  // 16 clients at once, each taking the next of 100 names as soon as its last request is answered
  const statuses: number[] = [];
  let next = 0;
  const client = async () => {
    while (next < 100) {
      const i = next++;
      statuses.push((await app.request('POST', '/api/v3/recordings', { body: { name: `r${i}`, stream: `live/r${i}` } })).status);
    }
  };
  await Promise.all(Array.from({ length: 16 }, client));
  t.equal(statuses.filter((s) => s === 201).length, 64, '64 created (the default max_recordings)');
  t.equal(statuses.filter((s) => s === 429).length, 36, 'the rest refused 429');
  t.equal((await app.request('GET', '/api/v3/recordings')).body.length, 64, '64 listed');
  const puts = await Promise.all(Array.from({ length: 16 }, (_, k) => app.request('PUT', `/api/v3/recordings/p${k}`, { body: { stream: 'live/p' } })));
  t.same(puts.map((r) => r.status), Array(16).fill(429), 'PUT of new names at the limit: 429 each');
  t.equal((await app.request('DELETE', '/api/v3/recordings/r0')).status, 204);
  const dup = await Promise.all(Array.from({ length: 8 }, () => app.request('POST', '/api/v3/recordings', { body: { name: 'dup', stream: 'live/dup' } })));
  t.same(dup.map((r) => r.status).sort(), [201, 409, 409, 409, 409, 409, 409, 409], 'one name, eight at once: created once');
  t.equal((await app.request('GET', '/api/v3/recordings')).body.length, 64, 'still 64');
});
