import t from 'tap';
import { Rendition } from '../../../plugins/llhls/playlist.ts';
import { advancePartLimit, decideReload, isReady } from '../../../plugins/llhls/playlist-reload.ts';

/*
 * Blocking playlist reload (plugins/llhls/playlist-reload.ts, RFC 8216bis 6.2.5.2): each class of
 * ask is answered now, waits for its segment or part, or is refused with 400 and a stable code.
 */

/** Segments 0..2 complete (4 parts of 0.5 s each), segment 3 open with 2 parts. */
function live(): Rendition {
  const r = new Rendition({ targetDuration: 2, partTarget: 0.5, window: 6, initUri: 'init.mp4' });
  for (let s = 0; s < 3; s++) {
    for (let p = 0; p < 4; p++) r.addPart({ duration: 0.5, uri: `s${s}.p${p}.m4s`, independent: p === 0 });
    r.closeSegment({ uri: `s${s}.m4s` });
  }
  r.addPart({ duration: 0.5, uri: 's3.p0.m4s', independent: true });
  r.addPart({ duration: 0.5, uri: 's3.p1.m4s', independent: false });
  return r;
}

const code = (d: ReturnType<typeof decideReload>): string | undefined => (d.kind === 'refuse' ? d.error.errorCode : undefined);

t.test('answered now: no directive, a segment or part already there, skip directives', async (t) => {
  const r = live();
  t.same(decideReload(r, {}), { kind: 'now', skip: false });
  t.same(decideReload(r, { msn: '2' }), { kind: 'now', skip: false }, 'the last complete segment');
  t.same(decideReload(r, { msn: '0', part: '9' }), { kind: 'now', skip: false }, 'a later part exists');
  t.same(decideReload(r, { msn: '3', part: '1' }), { kind: 'now', skip: false }, 'the newest part');
  t.same(decideReload(r, { skip: 'YES' }), { kind: 'now', skip: 'YES' });
  t.same(decideReload(r, { msn: '1', skip: 'v2' }), { kind: 'now', skip: 'v2' });
  r.end();
  t.same(decideReload(r, { msn: '4', part: '3' }), { kind: 'now', skip: false }, 'an ended stream answers at once');
});

t.test('wait: the next part, the open segment, the one after', async (t) => {
  const r = live();
  t.same(decideReload(r, { msn: '3', part: '2' }), { kind: 'wait', msn: 3, part: 2, skip: false, timeoutMs: 6000 });
  t.same(decideReload(r, { msn: '3' }), { kind: 'wait', msn: 3, part: undefined, skip: false, timeoutMs: 6000 });
  t.same(decideReload(r, { msn: '4', part: '0', skip: 'YES' }), { kind: 'wait', msn: 4, part: 0, skip: 'YES', timeoutMs: 6000 });
  t.same(decideReload(r, { msn: '4' }), { kind: 'wait', msn: 4, part: undefined, skip: false, timeoutMs: 6000 }, 'two past the last segment');
  t.notOk(isReady(r, 3, 2));
  r.addPart({ duration: 0.5, uri: 's3.p2.m4s', independent: false });
  t.ok(isReady(r, 3, 2), 'ready once the part is there');
  t.notOk(isReady(r, 3));
  r.addPart({ duration: 0.5, uri: 's3.p3.m4s', independent: false });
  r.closeSegment({ uri: 's3.m4s' });
  t.ok(isReady(r, 3), 'ready once the segment is complete');
  t.ok(isReady(r, 3, 7), 'a part index past the last of a complete segment: ready');
});

t.test('400: too far ahead', async (t) => {
  const r = live();
  t.equal(code(decideReload(r, { msn: '5' })), 'LLHLS_TOO_FAR_AHEAD', 'three past the last segment');
  t.equal(advancePartLimit(0.5), 6);
  t.equal(advancePartLimit(2), 3);
  t.same(decideReload(r, { msn: '3', part: '7' }).kind, 'wait', 'six parts ahead: the limit');
  t.equal(code(decideReload(r, { msn: '3', part: '8' })), 'LLHLS_TOO_FAR_AHEAD', 'seven parts ahead');
  t.same(decideReload(r, { msn: '4', part: '3' }).kind, 'wait', '2 left of segment 3 + 4 = 6');
  t.equal(code(decideReload(r, { msn: '4', part: '4' })), 'LLHLS_TOO_FAR_AHEAD');
  const refused = decideReload(r, { msn: '9' });
  t.equal(refused.kind === 'refuse' && refused.error.status, 400);
});

t.test('400: malformed asks and part without msn', async (t) => {
  const r = live();
  t.equal(code(decideReload(r, { part: '1' })), 'LLHLS_PART_WITHOUT_MSN');
  for (const msn of ['', '-1', '1.5', 'x', '1e3', '9999999999999999']) {
    t.equal(code(decideReload(r, { msn })), 'LLHLS_MALFORMED_ASK', `_HLS_msn=${msn}`);
  }
  t.equal(code(decideReload(r, { msn: '3', part: 'one' })), 'LLHLS_MALFORMED_ASK');
  t.equal(code(decideReload(r, { skip: 'yes' })), 'LLHLS_BAD_SKIP');
  const d = decideReload(r, { msn: 'x' });
  t.same(d.kind === 'refuse' && [d.error.status, d.error.details], [400, ['_HLS_msn must be a non-negative integer, not "x"']]);
});
