import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { PlaylistFeed } from '../../../../plugins/playout/playlist/feed.ts';
import type { Playlist } from '../../../../plugins/playout/playlist/schema.ts';

/* The item sequence with an item picked ahead (in-process, no ffmpeg): the picked item is the next one, an edit drops it. */

const media = (duration: number) => ({ video: 'h264', width: 320, height: 240, fps: 25, audio: 'aac', duration });

t.test('prefetch picks the next item once; next returns it; an edit picks again', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'feed-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of ['a', 'b', 'c', 'd']) writeFileSync(join(dir, `${f}.mp4`), 'x');
  let pl: Playlist = {
    name: 'p', loop: true, shuffle: false, mismatch: 'refuse', updated_at: 1, created_at: 1,
    format: { width: 320, height: 240, fps: 25, video_bitrate_kbit: 300, audio_bitrate_kbit: 64 },
    items: [{ source: '/a.mp4', media: media(10) }, { source: '/b.mp4', in: 2, out: 5, media: media(10) }, { source: '/c.mp4' }],
  } as Playlist;
  const feed = new PlaylistFeed({ name: 'p', processId: 'x', playlist: () => pl, rules: { diskDir: dir, inputProblem: () => undefined }, log: pino({ level: 'silent' }) });
  const a = feed.next()!;
  t.match(a, { url: '/a.mp4', duration: 10 }, 'the first item, with its probed duration');
  const b = feed.prefetch()!;
  t.match(b, { url: '/b.mp4', duration: 3 }, 'picked ahead: the second item, cut to in/out');
  t.equal(feed.prefetch(), b, 'once per item: the same pick again');
  t.equal(feed.status().next, '/b.mp4', 'the state names it as next');
  t.equal(feed.status().current, '/a.mp4', 'the first is still current');
  t.equal(feed.next(), b, 'next takes the picked item (the same object)');
  t.equal(feed.status().current, '/b.mp4');
  const c = feed.prefetch()!;
  t.match(c, { url: '/c.mp4' }, 'picked ahead: the third');
  t.equal(c.duration, undefined, 'no probe: no duration (the relay then does not start it ahead)');
  pl = { ...pl, items: [pl.items[0]!, pl.items[1]!, { source: '/d.mp4', media: media(4) }] };
  const d = feed.next()!;
  t.not(d, c, 'edited meanwhile (the same second: a new stored object): the pick is dropped');
  t.match(d, { url: '/d.mp4', duration: 4 }, 'and the same place of the new list is taken');
});

t.test('every item start asks the process\'s maker: an item, or a file its playlist names, that it may not read is skipped', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'feed-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of ['a.mp4', 'b.mp4', 'secret.ts']) writeFileSync(join(dir, f), 'x');
  writeFileSync(join(dir, 'show.m3u8'), '#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:1,\nsecret.ts\n#EXT-X-ENDLIST\n');
  const pl = {
    name: 'p', loop: true, shuffle: false, mismatch: 'normalise', updated_at: 1, created_at: 1,
    format: { width: 320, height: 240, fps: 25, video_bitrate_kbit: 300, audio_bitrate_kbit: 64 },
    items: [{ source: '/b.mp4' }, { source: 'show.m3u8' }, { source: '/a.mp4' }],
  } as Playlist;
  const asked: string[] = [];
  // stand-in: the maker's policies (ProcessesService.makerMay) read the playlist file but not what it names, nor b
  const may = (path: string) => { asked.push(path); return path === '/a.mp4' || path === '/show.m3u8'; };
  const feed = new PlaylistFeed({ name: 'p', processId: 'x', playlist: () => pl, rules: { diskDir: dir, inputProblem: () => undefined }, log: pino({ level: 'silent' }), may });
  t.match(feed.next(), { url: '/a.mp4' }, 'the first item its maker may read, all it leads to included');
  t.same(asked, ['/b.mp4', '/show.m3u8', '/secret.ts', '/a.mp4'], 'asked for each item and for the file the playlist names');
});

t.test('a looping playlist whose items all fail reports each skip once until an item plays', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'feed-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of ['a.mp4', 'b.mp4']) writeFileSync(join(dir, f), 'x');
  const pl = {
    name: 'p', loop: true, shuffle: false, mismatch: 'normalise', updated_at: 1, created_at: 1,
    format: { width: 320, height: 240, fps: 25, video_bitrate_kbit: 300, audio_bitrate_kbit: 64 },
    items: [{ source: '/a.mp4' }, { source: '/b.mp4' }],
  } as Playlist;
  let allowed = false;
  const events: string[] = [];
  const feed = new PlaylistFeed({
    name: 'p', processId: 'x', playlist: () => pl, rules: { diskDir: dir, inputProblem: () => undefined }, log: pino({ level: 'silent' }),
    may: (path) => allowed || path === '/nothing', emit: (type, _s, d) => { events.push(`${type} ${(d as { item: string }).item}`); },
  });
  for (let pass = 0; pass < 5; pass++) t.equal(feed.next(), undefined, `pass ${pass}: nothing its maker may read`);
  t.same(events, ['playlist.item.skipped /a.mp4', 'playlist.item.skipped /b.mp4'], 'each skip reported once, not once per pass');
  t.equal(feed.status().skipped, 10, 'the state counts every skip');
  allowed = true;
  t.match(feed.next(), { url: '/a.mp4' });
  feed.started();
  allowed = false;
  t.equal(feed.next(), undefined);
  t.same(events.slice(2), ['playlist.item.started /a.mp4', 'playlist.item.skipped /b.mp4', 'playlist.item.skipped /a.mp4'], 'after an item played, reported again');
});
