import t from 'tap';
import { rewritePlaylist } from '../../../plugins/sessions/playlist.ts';

let n = 0;
const fresh = () => `new${++n}`;

t.test('a media playlist without a session becomes a one-line master naming itself with a fresh id', async (t) => {
  n = 0;
  const out = rewritePlaylist('#EXTM3U\n#EXTINF:1,\na.ts\n', '/live/x.m3u8', 'b=2&a=1', undefined, fresh);
  t.equal(out, '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-STREAM-INF:BANDWIDTH=1024\nx.m3u8?a=1&b=2&session=new1');
});

t.test('with a session: segments (TS and fMP4, the init map) carry it, variants get fresh ones, self references are dropped', async (t) => {
  n = 0;
  const body = [
    '#EXTM3U', '#EXT-X-MAP:URI="init.mp4"', '#EXTINF:1,', 'seg1.m4s', '#EXTINF:1,', 'seg2.ts?x=1', '#EXTINF:1,', 'other.bin', 'v/low.m3u8', 'x.m3u8', '',
  ].join('\n');
  const out = rewritePlaylist(body, '/live/x.m3u8', 'session=S', 'S', fresh).split('\n');
  t.same(out, [
    '#EXTM3U', '#EXT-X-MAP:URI="init.mp4?session=S"', '#EXTINF:1,', 'seg1.m4s?session=S', '#EXTINF:1,', 'seg2.ts?session=S&x=1',
    '#EXTINF:1,', 'other.bin', 'v/low.m3u8?session=new1', '# m3u8 is referencing itself: x.m3u8', '',
  ]);
});

t.test('a master playlist without a session keeps its shape; each variant gets its own fresh id', async (t) => {
  n = 0;
  const out = rewritePlaylist('#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\na.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=2\nb.m3u8', '/m.m3u8', '', undefined, fresh);
  t.equal(out, '#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\na.m3u8?session=new1\n#EXT-X-STREAM-INF:BANDWIDTH=2\nb.m3u8?session=new2');
});
