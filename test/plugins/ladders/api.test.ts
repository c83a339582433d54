import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request, startApp } from '../../helpers/app.ts';
import { laddersRef, type LaddersService } from '../../../plugins/ladders/api.ts';
import { startCli } from '../../helpers/cli.ts';
import { waitFor } from '../../helpers/wait.ts';

/*
 * The ladders API on the real service: create, read, replace, delete; bad input is a 400 naming
 * the field; the config file's ladders are read-only; the bounds; a ladder whose process the
 * engine refuses is not kept; ladders and their processes survive a restart (SIGTERM, a new OS process).
 */

const RTMP = { enable: true, address: '127.0.0.1:0' };

t.test('CRUD, bad input, config ladders, bounds', async (t) => {
  const app = await startApp(t, {
    config: { rtmp: RTMP, ladders: { enable: true, max_ladders: 3, ladders: [{ id: 'fixed', pattern: 'studio/*', rungs: ['480p', 'audio'] }] } },
  });
  const put = (id: string, body: unknown) => app.request('PUT', `/api/v3/ladders/${id}`, { body });
  const a = await put('cam', { stream: 'live/cam', rungs: ['720p', { name: 'low', height: 234, video_kbps: 300, extra: true }], gop_seconds: 1, unknown: 'ignored' });
  t.equal(a.status, 201, a.text);
  t.match(a.body, {
    id: 'cam', stream: 'live/cam', gop_seconds: 1, idle_seconds: 30, source: 'api',
    rungs: [{ name: '720p', height: 720, video_kbps: 2800 }, { name: 'low', height: 234, video_kbps: 300, audio_kbps: 128, profile: 'main' }],
    processes: [{ id: 'ladder:live_cam', stream: 'live/cam' }],
  });
  t.notOk('unknown' in a.body, 'unknown fields ignored');
  const proc = await app.request('GET', '/api/v3/process/ladder:live_cam');
  t.equal(proc.status, 200, 'the engine has its process');
  t.match(proc.body.config, { reference: 'ladders', ondemand: { enable: true }, autostart: true, reconnect: true });
  t.equal(proc.body.config.output.length, 2, 'one output per rung');

  const again = await put('cam', { stream: 'live/cam', rungs: ['480p'] });
  t.equal(again.status, 200, 'replaced');
  t.same(again.body.rungs.map((r: { name: string }) => r.name), ['480p']);
  t.equal((await app.request('GET', '/api/v3/process/ladder:live_cam')).body.config.output.length, 1, 'its process follows');

  const list = await app.request('GET', '/api/v3/ladders');
  t.same(list.body.map((l: { id: string; source: string }) => [l.id, l.source]), [['fixed', 'config'], ['cam', 'api']], 'the config file\'s first');

  const bad: [string, unknown, number, string, RegExp][] = [
    ['x', { stream: 'a', rungs: ['999p'] }, 400, 'LADDERS_UNKNOWN_PRESET', /rungs\[0\]/],
    ['x', { stream: 'a', rungs: [{ name: 'v', height: 5000, video_kbps: 100 }] }, 400, 'LADDERS_INVALID', /rungs\[0\]\.height/],
    ['x', { rungs: ['360p'] }, 400, 'LADDERS_INVALID', /^stream/],
    ['x', { stream: 'a', rungs: 'high' }, 400, '', /rungs/],
    ['x', { stream: 'a' }, 400, '', /rungs/],
    ['bad%20id', { stream: 'a', rungs: ['360p'] }, 400, '', /id/],
    ['fixed', { stream: 'a', rungs: ['360p'] }, 409, 'LADDERS_FROM_CONFIG', /config file/],
    ['other', { stream: 'live/cam', rungs: ['360p'] }, 409, 'LADDERS_TAKEN', /'cam'/],
    ['other', { pattern: 'studio/*', rungs: ['360p'] }, 409, 'LADDERS_TAKEN', /'fixed'/],
  ];
  for (const [id, body, status, , detail] of bad) {
    const r = await put(id, body);
    t.equal(r.status, status, `${id} ${JSON.stringify(body)}: ${r.text}`);
    t.match(r.body, { code: status, message: String, details: [detail] }, 'an Error body naming the field');
  }
  t.equal((await app.request('DELETE', '/api/v3/ladders/fixed')).status, 409, 'config ladders are read-only');
  t.equal((await app.request('GET', '/api/v3/ladders/nope')).status, 404);
  t.equal((await app.request('DELETE', '/api/v3/ladders/nope')).status, 404);
  t.equal((await put('p2', { pattern: 'x/*', rungs: ['360p'] })).status, 201);
  const over = await put('p3', { pattern: 'y/*', rungs: ['360p'] });
  t.match([over.status, over.body.details], [429, [/max_ladders/]], 'at most max_ladders');

  t.equal((await app.request('DELETE', '/api/v3/ladders/cam')).status, 204);
  t.equal((await app.request('GET', '/api/v3/process/ladder:live_cam')).status, 404, 'its process is gone');
});

t.test('a ladder whose process the engine refuses (rtmp off) is not kept', async (t) => {
  const app = await startApp(t, { config: { ladders: { enable: true } } });
  const r = await app.request('PUT', '/api/v3/ladders/cam', { body: { stream: 'live/cam', rungs: ['360p'] } });
  t.equal(r.status, 409, r.text);
  t.match(r.body.details, [/rtmp/], 'the engine\'s reason');
  t.same((await app.request('GET', '/api/v3/ladders')).body, [], 'nothing stored');
});

t.test('ladders and their processes survive a restart (SIGTERM, a new process)', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ladders-restart-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const config = { db: { dir }, rtmp: RTMP, ladders: { enable: true } };
  const first = await startCli(t, config);
  const put = await request(first.url, 'PUT', '/api/v3/ladders/cam', { body: { stream: 'live/cam', rungs: ['360p', 'audio'], idle_seconds: 7 } });
  t.equal(put.status, 201, put.text);
  const before = (await request(first.url, 'GET', '/api/v3/process/ladder:live_cam')).body;
  const exited = new Promise((r) => first.child.once('exit', r));
  first.child.kill('SIGTERM');
  await exited;
  const second = await startCli(t, config);
  const got = await request(second.url, 'GET', '/api/v3/ladders/cam');
  t.equal(got.status, 200);
  t.match(got.body, { stream: 'live/cam', idle_seconds: 7, rungs: [{ name: '360p' }, { name: 'audio' }], source: 'api' });
  const after = await waitFor(async () => {
    const s = await request(second.url, 'GET', '/api/v3/process/ladder:live_cam/state');
    return s.status === 200 && s.body.ondemand?.waiting === true ? s : undefined;
  }, { what: 'the restored process waiting' });
  t.ok(after, 'its process waits again');
  const p = (await request(second.url, 'GET', '/api/v3/process/ladder:live_cam')).body;
  t.equal(p.created_at, before.created_at, 'the same process, not made anew');
  t.equal(p.updated_at, before.updated_at, 'unchanged by the restart');
});

t.test('renditionsOf follows the API: a replaced or deleted ladder is seen at once', async (t) => {
  const app = await startApp(t, { config: { rtmp: { enable: true, address: '127.0.0.1:0' }, ladders: { enable: true } } });
  const ladders = app.service.app.kernel.services.resolve(laddersRef) as LaddersService;
  const rungs = () => ladders.renditionsOf('live/memo')?.map((r) => r.name);
  t.equal(rungs(), undefined, 'no ladder');
  t.equal((await app.request('PUT', '/api/v3/ladders/memo', { body: { stream: 'live/memo', rungs: ['360p'] } })).status, 201);
  t.same(rungs(), ['live/memo/360p']);
  t.same(rungs(), ['live/memo/360p'], 'asked again (kept)');
  t.equal((await app.request('PUT', '/api/v3/ladders/memo', { body: { stream: 'live/memo', rungs: ['240p', 'audio'] } })).status, 200);
  t.same(rungs(), ['live/memo/240p', 'live/memo/audio'], 'the replaced ladder');
  t.equal((await app.request('DELETE', '/api/v3/ladders/memo')).status, 204);
  t.equal(rungs(), undefined, 'the deleted ladder');
});
