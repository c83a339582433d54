import t from 'tap';
import { parseStreamId, formatStreamId } from '../../../plugins/srt/streamid.ts';

const ok = (raw: string) => {
  const r = parseStreamId(raw);
  if (!r.ok) throw new Error(`${raw}: ${r.reason}`);
  return r.id;
};

t.test("Core's current form: resource[,mode:M][,token:T]", async (t) => {
  t.same(ok('name,mode:publish,token:T'), { resource: 'name', mode: 'publish', token: 'T', params: {} });
  t.same(ok('name'), { resource: 'name', mode: 'request', params: {} }, 'mode defaults to request');
  t.same(ok('name,token:foo,bar'), { resource: 'name', mode: 'request', token: 'foo,bar', params: {} }, 'a token may hold commas');
  t.same(ok('name,token:T,mode:publish'), { resource: 'name', mode: 'publish', token: 'T', params: {} }, 'any order');
  t.same(ok('a,b/c.stream,mode:request'), { resource: 'a,b/c.stream', mode: 'request', params: {} }, 'the resource runs to the first key');
  t.same(ok('mode:publish'), { resource: 'mode:publish', mode: 'request', params: {} }, 'no leading comma: a resource');
});

t.test('the #!:: form and the deprecated #!: form', async (t) => {
  t.same(ok('#!::r=name,m=publish'), { resource: 'name', mode: 'publish', params: {} });
  t.same(ok('#!::m=request,r=live/x,token=T,u=joe'), { resource: 'live/x', mode: 'request', token: 'T', params: { u: 'joe' } });
  t.same(ok('#!:m=publish,r=old,token=T'), { resource: 'old', mode: 'publish', token: 'T', params: {} }, 'deprecated #!:');
  t.same(ok('#!::r=name'), { resource: 'name', mode: 'request', params: {} });
});

t.test('URL-decoded first', async (t) => {
  t.same(ok('name%2Cmode%3Apublish%2Ctoken%3Aa%20b'), { resource: 'name', mode: 'publish', token: 'a b', params: {} });
  t.same(ok('%23!%3A%3Ar%3Dx%2Cm%3Dpublish'), { resource: 'x', mode: 'publish', params: {} });
});

t.test('refusals', async (t) => {
  t.match(parseStreamId(''), { ok: false, reason: /no resource/ });
  t.match(parseStreamId(',mode:publish'), { ok: false, reason: /no resource/ });
  t.match(parseStreamId('#!::m=publish'), { ok: false, reason: /no resource/ });
  t.match(parseStreamId('x,mode:play'), { ok: false, reason: /unknown mode 'play'/ });
  t.match(parseStreamId('x%zz'), { ok: false, reason: /URL-encoded/ });
});

t.test('formatStreamId builds what parseStreamId reads', async (t) => {
  t.equal(formatStreamId('cam', 'publish', ''), 'cam,mode:publish');
  t.same(ok(formatStreamId('cam', 'request', 'a,b')), { resource: 'cam', mode: 'request', token: 'a,b', params: {} });
});
