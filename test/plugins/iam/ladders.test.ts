import t from 'tap';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request, startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';
import { publish } from '../ladders/helpers.ts';

/*
 * A ladder's processes are its maker's (`ProcessesService.put(def, maker)`): a user allowed the
 * ladders API had the engine make processes that play any stream a ladder names or its pattern
 * matches and publish its rungs, held to no stream policy. Now the caller of the ladder's PUT is
 * the maker of its processes: an exact ladder of a stream the caller may not play is refused
 * (403, not kept), a pattern ladder makes no process for a stream its maker may not play (the
 * ladder says why), and the processes it may make keep their maker (asked again at each start).
 */

const JWT = 'iam-ladders-jwt-secret-0123456789abcdef';
const API = { auth: { enable: true, username: 'admin', password: 'admin-pw', jwt: { secret: JWT } } };
const alice = {
  name: 'alice', auth: { api: { userpass: { enable: true, password: 'alice password' } } }, policies: [
    { types: ['api'], resource: '/api/v3/ladders{,/**}', actions: ['GET', 'PUT', 'DELETE'] },
    { types: ['rtmp'], resource: 'live/alice/**', actions: ['PLAY', 'PUBLISH'] },
  ],
};

t.test('a ladder\'s processes are held to the policies of the user who made the ladder', async (t) => {
  const app = await startApp(t, {
    config: { api: API, iam: { enable: true }, rtmp: { enable: true, address: '127.0.0.1:0', token: 'rtmp-global' }, ladders: { enable: true, linger_seconds: 60 } },
  });
  const login = async (u: string, p: string) => (await request(app.url, 'POST', '/api/login', { body: { username: u, password: p } })).body.access_token as string;
  const admin = await login('admin', 'admin-pw');
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: alice, token: admin })).status, 200);
  const token = await login('alice', 'alice password');
  const put = (id: string, body: object, as = token) => app.request('PUT', `/api/v3/ladders/${id}`, { body, token: as });
  const stored = async () => JSON.parse(await readFile(join(app.dir, 'db', 'db.json'), 'utf8')).process as Record<string, { maker?: string }>;

  // a stream she may not play: refused, and not kept
  const other = await put('bobs', { stream: 'live/bob/cam', rungs: ['240p'] });
  t.equal(other.status, 403, 'an exact ladder of another\'s stream');
  t.match(other.body, { code: 403, details: [/may not (PLAY|PUBLISH) rtmp live\/bob\/cam[/ ].*\(no policy of its maker allows it\)/] });
  t.same((await app.request('GET', '/api/v3/ladders', { token })).body, [], 'not kept');
  t.same(Object.keys(await stored()), [], 'no process made');

  // her own stream: made, with her as its process's maker
  t.equal((await put('mine', { stream: 'live/alice/cam', rungs: ['240p'] })).status, 201, 'an exact ladder of her stream');
  const mine = (await app.request('GET', '/api/v3/ladders/mine', { token })).body.processes as { id: string }[];
  t.equal(mine.length, 1);
  t.equal((await stored())[mine[0]!.id]?.maker, 'iam:alice', 'its process\'s maker is the ladder\'s');

  // a pattern: a process for each stream it matches that she may play, none for the others
  t.equal((await put('any', { pattern: 'live/**', rungs: ['240p'] })).status, 201, 'a pattern ladder');
  const rtmp = `rtmp://127.0.0.1:${(app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService).ports().rtmp}`;
  publish(t, `${rtmp}/live/bob/other?token=rtmp-global`, { audio: false });
  publish(t, `${rtmp}/live/alice/two?token=rtmp-global`, { audio: false });
  const view = await waitFor(async () => {
    const v = (await app.request('GET', '/api/v3/ladders/any', { token })).body as { processes: { stream: string }[]; error?: string };
    return v.processes.length === 1 && v.error !== undefined ? v : undefined;
  }, { timeout: 30_000, what: 'the pattern ladder\'s process of her stream and its refusal of the other' });
  t.match(view.processes, [{ stream: 'live/alice/two' }], 'her stream gets a process');
  t.match(view.error, /may not (PLAY|PUBLISH) rtmp live\/bob\/other[/ ]/, 'the other is refused, and the ladder says why');
  const made = await stored();
  t.notOk(Object.values(made).some((p) => JSON.stringify(p).includes('live/bob/other')), 'no process reads the other\'s stream');

  // a ladder whose maker may not have a stream does not claim it: the next pattern matching it does
  t.equal((await put('later', { pattern: 'live/bob/*', rungs: ['240p'] }, admin)).status, 201, 'the superuser\'s pattern, made after hers');
  await waitFor(async () => ((await app.request('GET', '/api/v3/ladders/later', { token: admin })).body.processes as { stream: string }[])
    .some((p) => p.stream === 'live/bob/other') || undefined, { timeout: 30_000, what: 'the superuser\'s ladder takes the stream hers may not' });
  t.match((await app.request('GET', '/api/v3/ladders/any', { token })).body.error, /live\/bob\/other/, 'hers still says why');
  // another ladder's change leaves it there (the refusal stands), and the same ladder given again changes nothing
  const madeAt = async (id: string, field = 'created_at') => (await app.request('GET', `/api/v3/process/${id}`, { token: admin })).body[field] as number;
  const bobsOther = 'ladder:live_bob_other';
  const [otherAt, mineAt] = [await madeAt(bobsOther), await madeAt(mine[0]!.id, 'updated_at')];
  await waitFor(() => Math.floor(Date.now() / 1000) > Math.max(otherAt, mineAt) || undefined, { what: 'a second after they were made' });
  t.equal((await put('mine', { stream: 'live/alice/cam', rungs: ['240p'] })).status, 200, 'her ladder given again as it is');
  await waitFor(async () => ((await app.request('GET', '/api/v3/ladders/later', { token: admin })).body.processes as unknown[]).length === 1 || undefined, { what: 'the ladders settled' });
  t.equal(await madeAt(bobsOther), otherAt, 'the other\'s stream keeps its process (not removed and made again)');
  t.equal(await madeAt(mine[0]!.id, 'updated_at'), mineAt, 'hers is left alone (not replaced)');
  t.equal((await app.request('DELETE', '/api/v3/ladders/later', { token: admin })).status, 204);

  // the superuser's ladder is the superuser's: no stream refused
  const theirs = await put('bobs', { stream: 'live/bob/cam', rungs: ['240p'] }, admin);
  t.equal(theirs.status, 201, 'the superuser makes the ladder she could not');
  const bobs = (await app.request('GET', '/api/v3/ladders/bobs', { token: admin })).body.processes as { id: string }[];
  t.equal((await stored())[bobs[0]!.id]?.maker, 'admin');
  // a ladder replaced by the superuser: its processes are theirs from then on
  t.equal((await put('mine', { stream: 'live/alice/cam', rungs: ['360p'] }, admin)).status, 200);
  t.equal((await stored())[mine[0]!.id]?.maker, 'admin', 'replaced by the superuser: theirs');
  // the superuser's ladder is not hers to replace or delete (a user changes only the ladders it made)
  const notYours = { status: 403, body: { code: 403, details: [/ladder '\w+' was made by another user/] } };
  t.match(await put('bobs', { stream: 'live/bob/cam', rungs: ['240p'] }), notYours, 'she may not take the superuser\'s ladder');
  t.match(await app.request('DELETE', '/api/v3/ladders/bobs', { token }), notYours, 'nor delete it');
  const kept = (await app.request('GET', `/api/v3/process/${bobs[0]!.id}/state`, { token: admin })).body;
  t.equal(kept.order, 'start', 'which keeps its process');
  t.equal((await stored())[bobs[0]!.id]?.maker, 'admin', 'the superuser\'s still');
  t.equal((await put('any', { pattern: 'live/**', rungs: ['360p'] }, admin)).status, 200, 'the superuser takes her pattern ladder');
  await waitFor(async () => Object.values(await stored()).some((p) => JSON.stringify(p).includes('live/bob/other')) || undefined,
    { what: 'the superuser\'s pattern ladder makes the process she could not' });
  t.match(await put('any', { pattern: 'live/**', rungs: ['240p'] }), notYours, 'she may not take it back');
  t.match(await app.request('DELETE', '/api/v3/ladders/any', { token }), notYours, 'nor delete it');
  t.match((await app.request('GET', '/api/v3/ladders/any', { token })).body, { rungs: [{ name: '360p' }] }, 'the superuser\'s as it was');
  // given up by the superuser and made again by her: no process of the other's stream
  t.equal((await app.request('DELETE', '/api/v3/ladders/any', { token: admin })).status, 204);
  t.equal((await put('any', { pattern: 'live/**', rungs: ['240p'] })).status, 201, 'she makes it again');
  await waitFor(async () => !Object.values(await stored()).some((p) => JSON.stringify(p).includes('live/bob/other')) || undefined,
    { what: 'no process of the other\'s stream: its ladder\'s maker may not have it' });
  // renamed: her pattern ladder still makes processes for her streams (asked as the user that had her name when she made it)
  t.equal((await app.request('PUT', '/api/v3/iam/user/alice', { body: { name: 'carol' }, token: admin })).status, 200, 'alice renamed carol');
  publish(t, `${rtmp}/live/alice/three?token=rtmp-global`, { audio: false });
  await waitFor(async () => {
    const v = (await app.request('GET', '/api/v3/ladders/any', { token: admin })).body as { processes: { stream: string }[]; error?: string };
    return v.processes.some((p) => p.stream === 'live/alice/three') || undefined;
  }, { timeout: 30_000, what: 'a process of her new stream, made after the rename' });
  // (db.json is written just after the engine lists it)
  await waitFor(async () => (await stored())['ladder:live_alice_three']?.maker === 'iam:alice' || undefined, { what: 'its maker as the ladder keeps it, in db.json' });
  // renamed, still hers to change; a user given her old name later is another: not its
  const carol = await login('carol', 'alice password');
  t.equal((await put('any', { pattern: 'live/**', rungs: ['240p', '360p'] }, carol)).status, 200, 'carol (alice renamed) replaces the ladder alice made');
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: alice, token: admin })).status, 200, 'a new user alice');
  const newAlice = await login('alice', 'alice password');
  t.match(await put('any', { pattern: 'live/**', rungs: ['240p'] }, newAlice), notYours, 'the new alice may not replace the old alice\'s ladder');
  t.match(await app.request('DELETE', '/api/v3/ladders/any', { token: newAlice }), notYours, 'nor delete it');
  // (in a later second than her making: within the second alice's name passed from one user to another, neither holds it)
  const madeIn = Math.floor(Date.now() / 1000);
  await waitFor(() => Math.floor(Date.now() / 1000) > madeIn || undefined, { what: 'a second after the new alice was made' });
  t.equal((await put('hers', { stream: 'live/alice/new', rungs: ['240p'] }, newAlice)).status, 201, 'her own ladder');
  t.equal((await app.request('DELETE', '/api/v3/ladders/hers', { token: newAlice })).status, 204, 'which she deletes');
  for (const id of ['mine', 'any', 'bobs']) t.equal((await app.request('DELETE', `/api/v3/ladders/${id}`, { token: admin })).status, 204);
});
