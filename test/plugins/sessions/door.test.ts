import t from 'tap';
import { shortId as newSessionId } from '../../../sdk/short-id.ts';
import { sessionRefusals } from '../../../plugins/sessions/errors.ts';
import { waitFor } from '../../helpers/wait.ts';
import { MEDIA, fakeDoor, fetchPlaylist, get } from './door-fakes.ts';

const PLAYLIST = '/live/x.m3u8';
const served = (path: string, query: string, bytes: number, remote = '10.0.0.1') => ({ request: get(path, query, remote), status: 200, bytes });
const admission = (f: ReturnType<typeof fakeDoor>) => f.counter;

t.test('main copy: a new viewer gets a session-tagged master, its playlist registers it, playlist and segments count for it', async (t) => {
  const f = fakeDoor();
  const main = f.copy('main');
  const master = fetchPlaylist(main.taps, get(PLAYLIST, 'a=1'), MEDIA);
  t.type(master, 'string');
  const id = /x\.m3u8\?a=1&session=([^\s&]+)$/.exec(master as string)?.[1];
  t.ok(id, `a one-line master naming the playlist with a fresh id: ${String(master)}`);
  const hls = f.registry.get('hls')!;
  t.notOk(hls.has(id!), 'the master registers no one');

  const req = get(PLAYLIST, `a=1&session=${id}`, '10.0.0.1', { referer: 'https://player.example/x', 'user-agent': 'UA' });
  const tagged = fetchPlaylist(main.taps, req, MEDIA);
  t.match(tagged, `x_0001.ts?session=${id}`, 'segments carry the session');
  t.ok(hls.has(id!), 'registered on main at once');
  main.taps.onServed!({ request: req, status: 200, bytes: 100 });
  main.taps.onServed!(served('/live/x_0001.ts', `session=${id}`, 1000));
  const [s] = hls.active();
  t.same([s?.id, s?.reference, s?.local, s?.remote, s?.extra, s?.bytes_tx], [id, 'x', '/memfs/live/x.m3u8', 'player.example', '[10.0.0.0] UA', 1100]);
  t.equal(admission(f).taken(), 1, 'the place is a session now, no reservation left');
});

t.test('two thread copies sharing the state admit no more than max_sessions together; main gives the reservations back', async (t) => {
  const f = fakeDoor({ max_sessions: 2 });
  const a = f.copy('thread');
  const b = f.copy('thread');
  const ids = [newSessionId(), newSessionId(), newSessionId()];
  t.type(fetchPlaylist(a.taps, get(PLAYLIST, `session=${ids[0]}`), MEDIA), 'string', 'a admits the first');
  t.type(fetchPlaylist(b.taps, get(PLAYLIST, `session=${ids[1]}`), MEDIA), 'string', 'b admits the second');
  t.same(fetchPlaylist(a.taps, get(PLAYLIST, `session=${ids[2]}`), MEDIA), sessionRefusals.limit('Number of sessions exceeded'), 'nor a...');
  t.same(fetchPlaylist(b.taps, get(PLAYLIST, `session=${ids[2]}`), MEDIA), sessionRefusals.limit('Number of sessions exceeded'), '...nor b admits a third before main heard of either');
  t.same(fetchPlaylist(b.taps, get(PLAYLIST), MEDIA), sessionRefusals.limit('Number of sessions exceeded'), 'a new viewer without id is refused too');
  t.equal(f.registry.get('hls')!.size(), 0, 'main has not heard yet');
  f.deliverAll();
  t.equal(f.registry.get('hls')!.size(), 2);
  t.equal(admission(f).taken(), 2, 'two sessions, no reservation left');
  t.type(fetchPlaylist(a.taps, get(PLAYLIST, `session=${ids[1]}`), MEDIA), 'string', 'a knows the session b registered (broadcast) and lets it play');
  t.same(f.limits, ['Number of sessions exceeded'], 'one session.limit for the run of refusals');
});

t.test('an id registered by one copy is known at once to the others (the shared ring): one session, one place, bytes counted once', async (t) => {
  const f = fakeDoor({ max_sessions: 3 });
  const a = f.copy('thread');
  const b = f.copy('thread');
  const id = newSessionId();
  fetchPlaylist(a.taps, get(PLAYLIST, `session=${id}`), MEDIA);
  fetchPlaylist(b.taps, get(PLAYLIST, `session=${id}`), MEDIA);
  a.taps.onServed!(served('/live/x_0001.ts', `session=${id}`, 500));
  b.taps.onServed!(served('/live/x_0002.ts', `session=${id}`, 300));
  t.equal(admission(f).taken(), 1, 'the second copy found the id in the ring: no second place');
  f.deliverAll();
  const hls = f.registry.get('hls')!;
  t.equal(hls.size(), 1, 'one session');
  t.equal(admission(f).taken(), 1, 'the place is the session now');
  t.same(hls.active().map((s) => s.bytes_tx), [800], 'each answer counted once, activated by its segments');
});

t.test('segment bytes that reach main before their registration wait for it (until the next tick)', async (t) => {
  const f = fakeDoor();
  const a = f.copy('thread');
  const b = f.copy('thread');
  const id = newSessionId();
  fetchPlaylist(a.taps, get(PLAYLIST, `session=${id}`), MEDIA);
  b.taps.onServed!(served('/live/x_0001.ts', `session=${id}`, 700));
  b.deliver();
  a.deliver();
  t.same(f.registry.get('hls')!.active().map((s) => s.bytes_tx), [700]);
  b.taps.onServed!(served('/live/x_0001.ts', `session=${newSessionId()}`, 50));
  b.deliver();
  f.tick();
  t.same(f.registry.get('hls')!.active().map((s) => s.bytes_tx), [700], 'bytes of an id nobody registered are dropped');
});

t.test('the ignore list: no session, no limit, the playlist untouched, segments not counted', async (t) => {
  const f = fakeDoor({ max_sessions: 1, ip_ignorelist: ['10.9.0.0/16'] });
  const main = f.copy('main');
  const id = newSessionId();
  fetchPlaylist(main.taps, get(PLAYLIST, `session=${id}`), MEDIA);
  t.equal(fetchPlaylist(main.taps, get(PLAYLIST, '', '10.9.1.1'), MEDIA), MEDIA, 'over the limit, an ignored address gets the media playlist');
  t.equal(fetchPlaylist(main.taps, get(PLAYLIST, `session=${newSessionId()}`, '10.9.1.1'), MEDIA), MEDIA);
  main.taps.onServed!(served('/live/x_0001.ts', `session=${id}`, 10, '10.9.1.1'));
  main.taps.onServed!(served('/live/x_0001.ts', `session=${id}`, 20));
  t.same(f.registry.get('hls')!.active().map((s) => s.bytes_tx), [20]);
  t.same(f.limits, [], 'no refusal');
});

t.test('an id that is no short UUID is refused with 403 as before', async (t) => {
  const f = fakeDoor();
  const main = f.copy('main');
  t.same(main.taps.preServe!(get(PLAYLIST, 'session=nope')), sessionRefusals.badId());
  t.equal(main.taps.preServe!(get('/live/x_0001.ts', 'session=nope')), undefined, 'segments are never refused');
});

t.test('session.limit once per run of refusals across copies; an admission ends the run', async (t) => {
  const f = fakeDoor({ max_sessions: 1 });
  const a = f.copy('thread');
  const b = f.copy('thread');
  const first = newSessionId();
  fetchPlaylist(a.taps, get(PLAYLIST, `session=${first}`), MEDIA);
  a.taps.preServe!(get(PLAYLIST));
  b.taps.preServe!(get(PLAYLIST));
  a.taps.preServe!(get(PLAYLIST));
  f.deliverAll();
  t.same(f.limits, ['Number of sessions exceeded']);
  f.registry.get('hls')!.close(first);
  f.tick();
  f.deliverAll();
  t.equal(admission(f).taken(), 0, 'main published the close');
  t.type(fetchPlaylist(b.taps, get(PLAYLIST), MEDIA), 'string', 'a new viewer gets in');
  t.type(fetchPlaylist(b.taps, get(PLAYLIST, `session=${newSessionId()}`), MEDIA), 'string');
  a.taps.preServe!(get(PLAYLIST));
  f.deliverAll();
  t.same(f.limits, ['Number of sessions exceeded', 'Number of sessions exceeded'], 'a second run, a second event');
});

t.test('the bitrate limit: egress over max refuses everyone new; a playlist whose upload rate would push it over refuses its viewers', async (t) => {
  const f = fakeDoor({ max_bitrate_mbit: 1 });
  const a = f.copy('thread');
  const ingress = f.registry.get('hlsingress')!;
  ingress.register('/memfs/live/x.m3u8', { reference: 'x', location: '/memfs/live/x.m3u8' }, true);
  ingress.ingress('/memfs/live/x.m3u8', 1_000_000); // 0.8 Mbit/s over 10 s: twice that is over 1 Mbit
  f.tick();
  a.deliver();
  t.same(a.taps.preServe!(get(PLAYLIST)), sessionRefusals.limit('Bitrate limit exceeded'));
  t.equal(a.taps.preServe!(get('/live/y.m3u8')), undefined, 'another playlist is fine');
  const main = f.copy('main');
  t.same(main.taps.preServe!(get(PLAYLIST)), sessionRefusals.limit('Bitrate limit exceeded'), 'a copy started later hears the list (hello)');
  const id = newSessionId();
  fetchPlaylist(main.taps, get('/live/y.m3u8', `session=${id}`), MEDIA);
  main.taps.onServed!(served('/live/y_0001.ts', `session=${id}`, 2_000_000));
  f.tick();
  t.same(a.taps.preServe!(get('/live/y.m3u8')), sessionRefusals.limit('Bitrate limit exceeded'), 'egress top over the limit');
});

t.test('a reservation whose report never came (the thread died) expires; a late report does not go negative', async (t) => {
  const f = fakeDoor({ max_sessions: 1 });
  const a = f.copy('thread');
  const now = Date.now();
  fetchPlaylist(a.taps, get(PLAYLIST, `session=${newSessionId()}`), MEDIA);
  t.equal(admission(f).taken(), 1);
  f.door.tick(now + 4000);
  t.equal(admission(f).taken(), 1, 'kept while the report may be on its way');
  f.door.tick(now + 10_000);
  t.equal(admission(f).taken(), 0, 'expired');
  a.taps.onServed!(served('/live/x_0001.ts', 'session=x', 1)); // not an id: not sent
  f.deliverAll();
  t.equal(admission(f).taken(), 1, 'the late registration counts; its expired reservation is not given back twice');
});

t.test('a thread copy sends a registration at once, batches bytes (at most every flushMs) and sends the rest when it closes', async (t) => {
  const f = fakeDoor();
  const a = f.copy('thread', 30);
  const id = newSessionId();
  fetchPlaylist(a.taps, get(PLAYLIST, `session=${id}`), MEDIA);
  for (let i = 0; i < 5; i++) a.taps.onServed!(served('/live/x_0001.ts', `session=${id}`, 100));
  t.equal(a.outbox.length, 2, 'the hello and the registration went out at once');
  t.match(a.outbox[1], { items: [{ t: 'viewer', id }] });
  await waitFor(() => a.outbox.length === 3, { timeout: 5000, what: 'one batch' });
  t.match(a.outbox[2], { sums: [[`s${id}`, 500]] });
  a.taps.onServed!(served('/live/x_0002.ts', `session=${id}`, 7));
  a.taps.close!();
  t.match(a.outbox[3], { sums: [[`s${id}`, 7]] }, 'close flushes');
  a.deliver();
  t.same(f.registry.get('hls')!.active().map((s) => s.bytes_tx), [507]);
});
