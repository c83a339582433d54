import t from 'tap';
import { privateCache } from '../../../core/door/read.ts';

// a viewer's own playlist (the sessions plugin's rewrite) is private: one cache-control, never two
// (the LL-HLS variant playlist went out with `no-cache` and `private` as two headers)
t.test('private joins the file\'s own cache-control', async (t) => {
  t.same(privateCache([]), ['cache-control', 'private']);
  t.same(privateCache(['access-control-allow-origin', '*']), ['access-control-allow-origin', '*', 'cache-control', 'private']);
  t.same(privateCache(['cache-control', 'no-cache']), ['cache-control', 'private, no-cache']);
  t.same(privateCache(['vary', 'Origin', 'Cache-Control', 'public, max-age=1']), ['vary', 'Origin', 'Cache-Control', 'private, max-age=1'], 'public is no longer true');
  t.same(privateCache(['cache-control', 'public']), ['cache-control', 'private']);
});
