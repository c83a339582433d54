import t from 'tap';
import { requestedStream, resolveTarget, checkToken, checkApp } from '../../../plugins/rtmp/names.ts';

const pathOf = (app: string, name: string, q: Record<string, string> = {}) => {
  const r = requestedStream(app, name, q);
  return 'path' in r ? r.path : undefined;
};
const reasonOf = (app: string, name: string) => {
  const r = requestedStream(app, name, {});
  return 'reason' in r ? r.reason : undefined;
};

t.test('stream paths: app and name joined, nested apps and dots allowed, traversal refused', async (t) => {
  t.equal(pathOf('live', 'abc.stream'), '/live/abc.stream');
  t.equal(pathOf('a/b', 'c.stream'), '/a/b/c.stream', 'ffmpeg puts nested folders into the app');
  t.equal(pathOf('live', 'in_314159265359_refref'), '/live/in_314159265359_refref');
  t.equal(pathOf('', 'abc.stream'), '/abc.stream', 'a stream without app');
  t.equal(pathOf('live', 'restreamer-ui:ingest:0b1c-22.stream'), '/live/restreamer-ui:ingest:0b1c-22.stream', 'restreamer-ui ids');
  t.equal(pathOf('live', '%2e%2e'), '/live/%2e%2e', 'taken literally, never decoded to ..');
  t.match(reasonOf('live', '..'), /'\.' or '\.\.' path segment/);
  t.match(reasonOf('live/../x', 'y'), /'\.' or '\.\.' path segment/);
  t.match(reasonOf('live', 'a b'), /whitespace/);
  t.match(reasonOf('live', 'a\u0001b'), /control characters/);
  t.match(reasonOf('live', 'a\\b'), /backslash/);
  t.equal(reasonOf('', ''), 'no stream name');
  // to play as to publish (the table's bound): a 65,000-character name was logged three times per refusal
  t.match(reasonOf('live', 'n'.repeat(1100)), /longer than 1024 characters/);
  t.equal(pathOf('live', 'n'.repeat(1019)), `/live/${'n'.repeat(1019)}`);
});

t.test('a one-element URL: ffmpeg sends the whole element, query included, as the app and an empty name', async (t) => {
  t.same(requestedStream('ID.stream?token=T', '', {}), { path: '/ID.stream', query: { token: 'T' } });
  t.same(requestedStream('restreamer-ui:ingest:ab-12.stream?token=a%2Bb', '', {}), { path: '/restreamer-ui:ingest:ab-12.stream', query: { token: 'a+b' } });
  t.same(requestedStream('live?x=1', 'n', { token: 'T' }), { path: '/live/n', query: { x: '1', token: 'T' } }, 'both queries; the name wins');
});

t.test('token: the reference cases (query, else last path element when a token is configured)', async (t) => {
  t.same(resolveTarget('/foo/bar', {}, 'x'), { path: '/foo', token: 'bar', tokenFrom: 'path', params: {} });
  t.same(resolveTarget('/foo/bar', { token: 'abc' }, 'x'), { path: '/foo/bar', token: 'abc', tokenFrom: 'query', params: {} });
  t.same(resolveTarget('/foo/bar/abc', {}, 'x'), { path: '/foo/bar', token: 'abc', tokenFrom: 'path', params: {} });
  t.same(resolveTarget('/foo/bar', { a: '1' }, ''), { path: '/foo/bar', params: { a: '1' } }, 'no configured token: the path is kept');
  t.same(resolveTarget('/foo', {}, 'x'), { path: '/', token: 'foo', tokenFrom: 'path', params: {} });
});

t.test('token check and app rule', async (t) => {
  t.equal(checkToken({ path: '/a', params: {} }, ''), undefined);
  t.equal(checkToken({ path: '/a', token: 'x', params: {} }, 'x'), undefined);
  t.equal(checkToken({ path: '/a', params: {} }, 'x')!.kind, 'unauthorized');
  t.equal(checkToken({ path: '/a', token: 'y', tokenFrom: 'query', params: {} }, 'x')!.kind, 'forbidden');
  t.match(checkToken({ path: '/a', token: 'y', tokenFrom: 'path', params: {} }, 'x'), { kind: 'unauthorized', reason: /^no token given/ }, 'no ?token=: the path element was a guess');
  t.equal(checkApp('/anything', '/'), undefined);
  t.equal(checkApp('/live/a.stream', '/live'), undefined);
  t.equal(checkApp('/live/a.stream', '/live/'), undefined);
  t.match(checkApp('/other/a.stream', '/live'), { kind: 'forbidden' });
  t.match(checkApp('/livex/a', '/live'), { kind: 'forbidden' }, 'the app is a whole path prefix');
});
