import t from 'tap';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startApp } from '../../../helpers/app.ts';
import { portRange } from '../helpers.ts';
import { makeClip } from './media.ts';

/* `/api/v3/playlist/{name}`: CRUD, validation (400 naming the item), bounds, the stored state. */

t.test('playlist CRUD and validation', async (t) => {
  const [min, max] = await portRange(4);
  const app = await startApp(t, { config: { playout: { enable: true, min_port: min, max_port: max } } });
  const disk = join(app.dir, 'disk');
  await makeClip(join(disk, 'v'), 'a.mp4', 1);
  await makeClip(join(disk, 'v'), 'b.mp4', 2);
  await makeClip(join(disk, 'v'), 'big.mp4', 1, '480x270');
  await writeFile(join(disk, 'v', 'junk.mp4'), 'not a video');
  await symlink('/etc', join(disk, 'out'));

  t.same((await app.request('GET', '/api/v3/playlist')).body, [], 'none at first');
  t.equal((await app.request('GET', '/api/v3/playlist/x')).status, 404, 'unknown: 404');

  const body = { items: [{ source: '/v/a.mp4' }, { source: 'v/b.mp4', in: 0.5, out: 1.5 }, { source: 'https://example.invalid/x.mp4' }], loop: true };
  const put = await app.request('PUT', '/api/v3/playlist/chan1', { body });
  t.equal(put.status, 200, put.text);
  t.equal(put.body.name, 'chan1');
  t.equal(put.body.mismatch, 'normalise', 'normalise by default');
  t.equal(put.body.format.width, 1280, 'the default format');
  t.equal(put.body.items[0].media.width, 320, 'disk items probed');
  t.ok(put.body.items[0].media.duration > 0.5);
  t.notOk(put.body.items[2].media, 'URLs are not probed when normalising');
  t.equal((await app.request('GET', '/api/v3/playlist/chan1')).body.items.length, 3);
  t.equal((await app.request('GET', '/api/v3/playlist')).body.length, 1);
  const stored = JSON.parse(await readFile(join(app.dir, 'db', 'plugins', 'playout', 'playlists.json'), 'utf8')) as { playlists: Record<string, unknown> };
  t.ok(stored.playlists.chan1, 'written to the state document');

  const refused = async (name: string, b: unknown, match: RegExp, what: string) => {
    const r = await app.request('PUT', `/api/v3/playlist/${name}`, { body: b });
    t.equal(r.status, 400, `${what}: 400`);
    t.match(JSON.stringify(r.body), match, `${what}: ${JSON.stringify(r.body?.details ?? r.body)}`);
  };
  await refused('x', { items: [{ source: '/v/missing.mp4' }] }, /items\[0\].*no such file/, 'a missing file');
  await refused('x', { items: [{ source: '/v/../../etc/passwd' }] }, /items\[0\].*\.\./, 'a path with ..');
  await refused('x', { items: [{ source: '/out/passwd' }] }, /items\[0\].*outside the disk/, 'a symlink out of the disk');
  await refused('x', { items: [{ source: 'file:///etc/passwd' }] }, /items\[0\].*only http/, 'another scheme');
  await refused('x', { items: [{ source: '/v/junk.mp4' }] }, /items\[0\].*junk/, 'a file that does not probe');
  await refused('x', { items: [{ source: '/v/a.mp4', in: 2, out: 1 }] }, /out \(1\) must be after in \(2\)/, 'out before in');
  await refused('x', { items: [{ source: '/v/a.mp4' }, { source: '/v/big.mp4' }], mismatch: 'refuse' }, /items\[1\].*video size 480x270 != 320x240/, 'a mismatch');
  await refused('x', { items: [{ path: '/v/a.mp4' }] }, /.+/, 'an unknown field');
  await refused('x', { items: Array.from({ length: 1001 }, () => ({ source: '/v/a.mp4' })) }, /.+/, 'too many items');
  t.equal((await app.request('PUT', `/api/v3/playlist/${'n'.repeat(65)}`, { body })).status, 400, 'a name too long: 400');
  t.equal((await app.request('PUT', '/api/v3/playlist/a%20b', { body })).status, 400, 'a name with a space: 400');
  t.equal((await app.request('GET', '/api/v3/playlist')).body.length, 1, 'nothing stored by refusals');

  const same = await app.request('PUT', '/api/v3/playlist/copy', { body: { items: [{ source: '/v/a.mp4' }, { source: '/v/b.mp4' }], mismatch: 'refuse', loop: false, shuffle: true } });
  t.equal(same.status, 200, 'matching items with refuse: stored');
  t.same([same.body.loop, same.body.shuffle], [false, true]);

  t.equal((await app.request('DELETE', '/api/v3/playlist/chan1')).status, 200);
  t.equal((await app.request('DELETE', '/api/v3/playlist/chan1')).status, 404, 'deleted twice: 404');
  t.same((await app.request('GET', '/api/v3/playlist')).body.map((p: { name: string }) => p.name), ['copy']);
});
