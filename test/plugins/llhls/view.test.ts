import t from 'tap';
import { LlhlsFeed, type StreamTexts } from '../../../plugins/llhls/feed.ts';
import { Rendition } from '../../../plugins/llhls/playlist.ts';
import { decideReload } from '../../../plugins/llhls/playlist-reload.ts';
import { renderMedia, renderPlain } from '../../../plugins/llhls/playlist-render.ts';
import { LlhlsView } from '../../../plugins/llhls/view.ts';
import { decodeState, encodeState, viewMessage } from '../../../plugins/llhls/view-state.ts';
import { isApiError, type FsFile, type FsNode } from '../../../sdk/index.ts';

/*
 * The llhls view of a serving thread (plugins/llhls/view.ts) over a fake thread copy fed by the
 * store's real feed (feed.ts): what it answers itself (admitted viewers' playlists, blocking
 * reloads held until the fed state is ready, the hinted part held until it is in the copy), what
 * it passes to main (undefined), what it refuses as main does, and what it tells main.
 */

/** Segments 0..1 complete (2 parts of 0.5 s), segment 2 open with one part; the hint is its second. */
function live(): Rendition {
  const r = new Rendition({ targetDuration: 1, partTarget: 0.5, window: 6, initUri: 'e-init0.mp4' });
  for (let s = 0; s < 2; s++) {
    for (let p = 0; p < 2; p++) r.addPart({ duration: 0.5, uri: `e-${s}.${p}.m4s`, independent: p === 0 });
    r.closeSegment({ uri: `e-${s}.m4s` });
  }
  r.addPart({ duration: 0.5, uri: 'e-2.0.m4s', independent: true });
  r.setHint('e-2.1.m4s');
  return r;
}

const text = (data: string, etag: string): FsFile => {
  const b = Buffer.from(data);
  return { data: b, size: b.length, mtimeMs: 1_700_000_000_000, etag };
};

/** A store stand-in: one stream `s` whose rendition the test moves, the real feed, and a thread's copy with the view on it. */
function setup(token = '') {
  const r = live();
  let version = 0;
  const listeners = new Set<() => void>();
  const texts = (): StreamTexts => ({
    rendition: r,
    files: {
      ll: text(renderMedia(r, { skip: false }), `"v${version}.ll"`), llYES: text(renderMedia(r, { skip: 'YES' }), `"v${version}.llYES"`),
      llv2: text(renderMedia(r, { skip: 'v2' }), `"v${version}.llv2"`), plain: text(renderPlain(r), `"v${version}.plain"`),
    },
  });
  const clock = { now: Date.now() };
  const feed = new LlhlsFeed({
    files: () => [], now: () => clock.now, keepMs: 60_000, texts: (name) => (name === 's' ? texts() : undefined),
    onVersion: (name, fn) => { if (name !== 's') return undefined; listeners.add(fn); return () => listeners.delete(fn); },
  });
  const copy = new Map<string, FsFile>();
  const changed: Array<(path: string) => void> = [];
  feed.subscribe((c) => {
    if (c.file) copy.set(c.path, c.file); else copy.delete(c.path);
    for (const fn of changed) fn(c.path);
  });
  const sent: unknown[] = [];
  const view = new LlhlsView({ token }, { get: (p) => copy.get(p), onChange: (fn) => { changed.push(fn); }, send: (m) => { sent.push(m); } });
  const bump = (move: () => void) => {
    move();
    version++;
    for (const fn of [...listeners]) fn();
  };
  return { r, feed, copy, sent, view, bump, clock, listeners, put: (path: string) => feed.emit(path, text('part', '"p"')) };
}

const body = (n: FsNode | undefined) => (n?.kind === 'file' ? n.file.data!.toString() : undefined);
const header = (n: FsNode | undefined, name: string) => {
  const h = n?.kind === 'file' ? n.file.headers ?? [] : [];
  return h[h.indexOf(name) + 1];
};
const me = { query: '', remote: '10.0.0.1' };

t.test('no state: main answers, the view asks for it once a second; then an admitted viewer is served here', async (t) => {
  const s = setup();
  t.equal(s.view.open('/s/index.m3u8', me), undefined, 'no state yet: main');
  t.equal(s.view.open('/s/index.m3u8', me), undefined);
  t.same(s.sent, [{ t: 'want', stream: 's' }], 'one want for both');
  s.feed.want('s');
  t.ok(s.copy.has('/s/.state'), 'main feeds the wanted stream at once');
  t.equal(s.view.open('/s/index.m3u8', me), undefined, 'a viewer main has not admitted: main');
  s.feed.viewer('s', '10.0.0.1', '', true);
  const ll = s.view.open('/s/index.m3u8', me) as FsNode;
  t.equal(body(ll), renderMedia(s.r, { skip: false }), 'the LL playlist main renders');
  t.equal(ll.kind === 'file' && ll.file.etag, '"v0.ll"', 'with its ETag');
  t.equal(header(ll, 'cache-control'), 'no-cache');
  t.equal(body(s.view.open('/s/plain.m3u8', me) as FsNode), renderPlain(s.r), 'the plain playlist');
  t.equal(body(s.view.open('/s/index.m3u8', { ...me, query: '_HLS_skip=YES' }) as FsNode), renderMedia(s.r, { skip: 'YES' }), 'a delta update');
  t.same(s.sent.slice(1), [{ t: 'use', stream: 's', ip: '10.0.0.1', token: '' }], 'its use told main once');
  t.equal(s.view.open('/s/index.m3u8', { query: '', remote: undefined }), undefined, 'a client the thread cannot tell: main');
  t.equal(s.view.open('/s/index.m3u8', { query: '', remote: '10.0.0.2' }), undefined, 'another client: main admits it');
  t.equal(s.view.open('/s/.state', me), undefined, 'the feed\'s files are never served');
  t.equal(s.view.open('/s/.viewers/x', me), undefined);
  t.equal(s.view.open('/s/master.m3u8', me), undefined, 'the multivariant and DVR playlists are main\'s');
  s.feed.viewer('s', '10.0.0.1', '', false);
  t.equal(s.view.open('/s/index.m3u8', me), undefined, 'a viewer main let go: main again');
  s.feed.viewer('s', '10.0.0.1', '', true);
  s.bump(() => s.r.end());
  t.equal(s.view.open('/s/index.m3u8', me), undefined, 'an ended stream: main (it may start a new packager)');
  s.feed.stopped('s');
  t.notOk(s.copy.has('/s/.state'), 'a stopped packager\'s state goes');
});

t.test('the token, and the 400s of main\'s decision', async (t) => {
  const s = setup('tok');
  s.feed.want('s');
  s.feed.viewer('s', '10.0.0.1', 'tok', true);
  for (const query of ['', 'token=nope']) {
    let got: unknown;
    try { s.view.open('/s/index.m3u8', { query, remote: undefined }); } catch (err) { got = err; }
    t.match(got, { status: 401, errorCode: 'LLHLS_TOKEN' }, `${query || 'none'}: 401 here`);
  }
  t.ok(body(s.view.open('/s/index.m3u8', { query: 'token=tok', remote: '10.0.0.1' }) as FsNode), 'the token');
  for (const query of ['_HLS_msn=abc', '_HLS_part=1', '_HLS_msn=99', '_HLS_msn=2&_HLS_part=40', '_HLS_skip=NO']) {
    const want = decideReload(s.r, { msn: new URLSearchParams(query).get('_HLS_msn') ?? undefined, part: new URLSearchParams(query).get('_HLS_part') ?? undefined, skip: new URLSearchParams(query).get('_HLS_skip') ?? undefined });
    let got: unknown;
    try { s.view.open('/s/index.m3u8', { query: `token=tok&${query}`, remote: '10.0.0.1' }); } catch (err) { got = err; }
    t.ok(isApiError(got) && want.kind === 'refuse', `${query}: refused`);
    if (isApiError(got) && want.kind === 'refuse') t.same([got.status, got.errorCode, got.toBody()], [400, want.error.errorCode, want.error.toBody()], 'as main refuses');
  }
});

t.test('a blocking reload and the hinted part are held until the fed state and the copy have them', async (t) => {
  const s = setup();
  s.feed.want('s');
  s.feed.viewer('s', '10.0.0.1', '', true);
  const held = s.view.open('/s/index.m3u8', { ...me, query: '_HLS_msn=2&_HLS_part=1' });
  const hinted = s.view.open('/s/e-2.1.m4s', me);
  t.ok(held instanceof Promise && hinted instanceof Promise, 'both held');
  let answered = false;
  void (held as Promise<unknown>).then(() => { answered = true; });
  s.put('/s/e-2.1.m4s');
  t.equal(body(await hinted), 'part', 'the hinted part once it is in the copy');
  await new Promise((r) => setImmediate(r));
  t.notOk(answered, 'the reload waits for the state that lists the part');
  s.bump(() => { s.r.addPart({ duration: 0.5, uri: 'e-2.1.m4s', independent: false }); s.r.setHint('e-3.0.m4s'); });
  const got = await held;
  t.match(body(got), /e-2\.1\.m4s/, 'answered with the part in it');
  t.equal(got?.kind === 'file' && got.file.etag, '"v1.ll"', 'the version that made it ready');
  t.equal(header(got, 'cache-control'), 'public, max-age=6', 'a blocking answer may be cached, as main says');
  t.equal(s.view.open('/s/e-9.0.m4s', me), undefined, 'a missing file that is not the hint: main');
});

t.test('a reload nothing makes ready is 503 after its timeout; a state that goes passes it to main', async (t) => {
  const s = setup();
  s.feed.want('s');
  s.feed.viewer('s', '10.0.0.1', '', true);
  const gone = s.view.open('/s/index.m3u8', { ...me, query: '_HLS_msn=3' }) as Promise<FsNode | undefined>;
  s.feed.stopped('s');
  t.equal(await gone, undefined, 'its state went: main answers');
  s.feed.want('s');
  const started = Date.now();
  const late = await (s.view.open('/s/index.m3u8', { ...me, query: '_HLS_msn=3' }) as Promise<unknown>).catch((err: unknown) => err);
  t.match(late, { status: 503, errorCode: 'LLHLS_RELOAD_TIMEOUT' }, 'refused as main refuses');
  t.ok(Date.now() - started >= 2900, 'after three target durations');
});

t.test('the state round trip, the wanted streams\' sweep, and the messages main accepts', async (t) => {
  const s = setup();
  s.feed.want('s');
  const st = decodeState(s.copy.get('/s/.state')!.data!);
  t.match(st, { ended: false, lastMsn: 1, openMsn: 2, openParts: 1, newestPart: { msn: 2, index: 0 }, segments: 2, hint: 'e-2.1.m4s', targetDuration: 1, partTarget: 0.5 });
  t.equal(st.texts.plain.data.toString(), renderPlain(s.r));
  t.ok(s.copy.get('/s/.state')!.data!.buffer instanceof SharedArrayBuffer, 'in shared memory (the threads share it)');
  t.same(decodeState(encodeState(st)), st, 'encode and decode are inverse');
  t.same(s.feed.snapshot().files.map(([p]) => p), ['/s/.state'], 'a new thread starts with it');
  s.clock.now += 30_000;
  s.feed.want('s');
  s.clock.now += 40_000;
  s.feed.sweep();
  t.ok(s.copy.has('/s/.state'), 'a want refreshed within keepMs keeps the state');
  s.clock.now += 30_000;
  s.feed.sweep();
  t.notOk(s.copy.has('/s/.state'), 'nobody wanted it for keepMs: it goes');
  t.equal(s.listeners.size, 0, 'and its packager is not followed any more');
  t.same(viewMessage({ t: 'use', stream: 's', ip: '1.2.3.4', token: '' }), { t: 'use', stream: 's', ip: '1.2.3.4', token: '' });
  for (const bad of [undefined, 'x', { t: 'use', stream: 's' }, { t: 'want', stream: 3 }, { t: 'other', stream: 's' }]) t.equal(viewMessage(bad), undefined);
});
