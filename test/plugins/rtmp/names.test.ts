import t from 'tap';
import { streamPath, resolveTarget, checkToken, checkApp } from '../../../plugins/rtmp/names.ts';

t.test('stream paths: app and name joined, nested apps and dots allowed, traversal refused', async (t) => {
  t.equal(streamPath('live', 'abc.stream'), '/live/abc.stream');
  t.equal(streamPath('a/b', 'c.stream'), '/a/b/c.stream', 'ffmpeg puts nested folders into the app');
  t.equal(streamPath('live', 'in_314159265359_refref'), '/live/in_314159265359_refref');
  t.equal(streamPath('', 'abc.stream'), '/abc.stream', 'a stream without app');
  t.equal(streamPath('live', '..'), undefined);
  t.equal(streamPath('live', 'a b'), undefined);
  t.equal(streamPath('', ''), undefined);
});

t.test('token: the reference cases (query, else last path element when a token is configured)', async (t) => {
  t.same(resolveTarget('/foo/bar', {}, 'x'), { path: '/foo', token: 'bar', params: {} });
  t.same(resolveTarget('/foo/bar', { token: 'abc' }, 'x'), { path: '/foo/bar', token: 'abc', params: {} });
  t.same(resolveTarget('/foo/bar/abc', {}, 'x'), { path: '/foo/bar', token: 'abc', params: {} });
  t.same(resolveTarget('/foo/bar', { a: '1' }, ''), { path: '/foo/bar', params: { a: '1' } }, 'no configured token: the path is kept');
  t.same(resolveTarget('/foo', {}, 'x'), { path: '/', token: 'foo', params: {} });
});

t.test('token check and app rule', async (t) => {
  t.equal(checkToken({ path: '/a', params: {} }, ''), undefined);
  t.equal(checkToken({ path: '/a', token: 'x', params: {} }, 'x'), undefined);
  t.equal(checkToken({ path: '/a', params: {} }, 'x')!.kind, 'unauthorized');
  t.equal(checkToken({ path: '/a', token: 'y', params: {} }, 'x')!.kind, 'forbidden');
  t.equal(checkApp('/anything', '/'), undefined);
  t.equal(checkApp('/live/a.stream', '/live'), undefined);
  t.equal(checkApp('/live/a.stream', '/live/'), undefined);
  t.match(checkApp('/other/a.stream', '/live'), { kind: 'forbidden' });
  t.match(checkApp('/livex/a', '/live'), { kind: 'forbidden' }, 'the app is a whole path prefix');
});
