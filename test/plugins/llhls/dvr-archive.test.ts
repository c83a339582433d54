// A DVR archive in-process (plugins/llhls/dvr-archive.ts) over stand-ins of the recordings service
// and its filesystem (named as such: the real ones run in dvr-edge.test.ts): its playlist text is
// made once and answered again while nothing it lists changed, and made anew as soon as the
// archive takes a segment, the recording's index changes, the stream ends, or the window's start
// passes the first recorded segment listed; the archives a stopped service left are deleted, and
// nothing else (a recording's prefix may hold glob characters).
import t from 'tap';
import { globMatcher, type FilesystemService } from '../../../sdk/index.ts';
import type { RecordedEntries, RecordingsService } from '../../../plugins/recordings/api.ts';
import { DvrArchive, deleteStaleArchives } from '../../../plugins/llhls/dvr-archive.ts';
import { checkPlaylist, checkUpdate } from '../../../plugins/llhls/check.ts';
import { waitFor } from '../../helpers/wait.ts';
import type { Rendition } from '../../../plugins/llhls/playlist.ts';

const T0 = 1_700_000_000_000;
const WINDOW_MS = 20_000;

/** Stand-in: the recording's filesystem, its files in a Map. */
const mapFs = (files: Map<string, Buffer>) => ({
  writeFile: async (p: string, d: Buffer) => { files.set(p, d); return { created: true, size: d.length }; },
  deleteFile: async (p: string) => files.delete(p),
  list: async () => [],
  readFile: async (p: string) => files.get(p),
}) as unknown as FilesystemService;

t.test('the DVR text is kept while what it lists is the same', async (t) => {
  const files = new Map<string, Buffer>();
  const fs = mapFs(files);
  // stand-in: the recordings service, ten recorded 2 s segments from T0
  let entries: RecordedEntries = {
    list: Array.from({ length: 10 }, (_, i) => ({ msn: i, start: T0 + i * 2000, duration: 2, discontinuity: false })),
    discBefore: 0, recording: true,
  };
  const recordings = { entries: () => entries, readSegment: async () => undefined } as unknown as RecordingsService;
  const archive = new DvrArchive({ recordings, recording: 'cam', side: { fs, dir: '/rec/cam/cmaf-e' }, windowMs: WINDOW_MS, log: { warn: () => {} } });
  t.teardown(() => archive.close());

  const segments: Rendition['segments'] = [];
  const rendition = { segments, initUri: 'e-init0.mp4' } as unknown as Rendition;
  const file = () => ({ data: Buffer.from('x'), mtimeMs: 0 });
  const segment = (msn: number, at: number) => segments.push({ msn, duration: 2, uri: `e-${msn}.m4s`, programDateTime: at, independent: true, discontinuity: false, parts: [] });

  segment(0, T0 + 20_000);
  let now = T0 + 22_000;
  archive.take(rendition, file, now);
  const first = archive.text(now, false)!;
  t.match(first, /^rec-1700000002000\.m4s$/m, 'the window starts with the recorded segment that ends after now - 20 s');
  t.match(first, /^e-0\.m4s$/m, 'then the archive');
  // the stand-in's index changed in place (the real one gives a new object): unseen while the text is kept
  entries.list[6]!.duration = 2.5;
  t.equal(archive.text(now + 500, false), first, 'the same text again, not made anew');
  now = T0 + 22_000 + 1999;
  t.equal(archive.text(now, false), first, 'until the first recorded segment leaves the window');
  now = T0 + 24_000;
  const slid = archive.text(now, false)!;
  t.notMatch(slid, /^rec-1700000002000\.m4s$/m, 'then it is gone');
  t.match(slid, /^rec-1700000004000\.m4s$/m);
  t.match(slid, /#EXTINF:2\.5,\nrec-1700000012000\.m4s/, 'made anew');

  segment(1, T0 + 22_000);
  archive.take(rendition, file, now);
  const added = archive.text(now, false)!;
  t.match(added, /^e-1\.m4s$/m, 'a segment the archive took shows at once');

  entries = { ...entries, list: entries.list.map((e, i) => (i === 7 ? { ...e, discontinuity: true } : e)) };
  t.match(archive.text(now, false), /#EXT-X-DISCONTINUITY\n(#EXT-X-MAP:URI="\S+"\n)?#EXT-X-PROGRAM-DATE-TIME:\S+\n#EXTINF:2,\nrec-1700000014000\.m4s/, 'a new index of the recording shows at once');
  t.match(archive.text(now, true)!, /#EXT-X-ENDLIST\n$/, 'the end shows at once');
  t.ok(files.has('/rec/cam/cmaf-e/e-0.m4s') && files.has('/rec/cam/cmaf-e/e-init0.mp4'), 'archived beside the recording');
});

t.test('archives a stopped service left are deleted, only the recording\'s own', async (t) => {
  const files = new Map<string, Buffer>([
    ['/rec*/cam/cmaf-old/old-1.m4s', Buffer.from('left behind')],
    ['/rec*/cam/cmaf-new/new-1.m4s', Buffer.from('this archive')],
    ['/rec*/cam/2026-12-06/1796576601399.ts', Buffer.from('a recorded segment')],
    ['/recX/cam/cmaf-old/old-1.m4s', Buffer.from('another prefix the glob would match unescaped')],
  ]);
  // stand-in: a filesystem that matches globs as every filesystem does (`globMatcher`)
  const fs = {
    list: async (glob: string) => { const match = globMatcher(glob); return [...files.keys()].filter((n) => match(n)).map((name) => ({ name, size_bytes: 1, last_modified: 0 })); },
    deleteFile: async (p: string) => files.delete(p),
  } as unknown as FilesystemService;
  deleteStaleArchives({ fs, dir: '/rec*/cam/cmaf-new' }, { warn: () => {} });
  await waitFor(() => !files.has('/rec*/cam/cmaf-old/old-1.m4s'), { what: 'the stale archive deleted' });
  t.same([...files.keys()].sort(), ['/rec*/cam/2026-12-06/1796576601399.ts', '/rec*/cam/cmaf-new/new-1.m4s', '/recX/cam/cmaf-old/old-1.m4s']);
});

t.test('a publisher that comes back continues the archive: no segment renamed or renumbered', async (t) => {
  const files = new Map<string, Buffer>();
  // stand-ins: the recording's filesystem in a Map, a recording of 2 s segments from T0
  const fs = mapFs(files);
  let entries: RecordedEntries = { list: [], discBefore: 0, recording: true };
  const recordAt = (now: number) => {
    const list = [];
    for (let i = 0; T0 + (i + 1) * 2000 <= now; i++) list.push({ msn: i, start: T0 + i * 2000, duration: 2, discontinuity: false });
    entries = { list, discBefore: 0, recording: true };
  };
  const recordings = { entries: () => entries, readSegment: async () => undefined } as unknown as RecordingsService;
  const archive = new DvrArchive({ recordings, recording: 'cam', side: { fs, dir: '/rec/cam/cmaf-a' }, windowMs: WINDOW_MS, log: { warn: () => {} } });
  t.teardown(() => archive.close());
  const file = () => ({ data: Buffer.from('x'), mtimeMs: 0 });
  const packager = (epoch: string) => {
    const segments: Rendition['segments'] = [];
    return {
      r: { segments, initUri: `${epoch}-init0.mp4` } as unknown as Rendition,
      add: (msn: number, at: number) => segments.push({ msn, duration: 1, uri: `${epoch}-${msn}.m4s`, programDateTime: at, independent: true, discontinuity: false, parts: [] }),
    };
  };

  const answers: string[] = [];
  /** Six 1 s segments of packager `p` from `from` (ms after T0), each taken as it completes, each answer kept. */
  const publish = (p: ReturnType<typeof packager>, from: number) => {
    for (let i = 0; i < 6; i++) {
      p.add(i, T0 + from + i * 1000);
      const now = T0 + from + (i + 1) * 1000;
      recordAt(now);
      archive.take(p.r, file, now);
      answers.push(archive.text(now, false)!);
    }
  };
  // the first publisher: 8 s recorded, then 6 s of 1 s segments archived
  recordAt(T0 + 8_000);
  publish(packager('a'), 8_000);
  // it left and came back 3 s later: a new packager, numbered from 0 again, a new epoch
  archive.follow();
  publish(packager('b'), 17_000);
  for (let i = 1; i < answers.length; i++) {
    t.same(checkPlaylist(answers[i]!), [], `answer ${i}: valid`);
    t.same(checkUpdate(answers[i - 1]!, answers[i]!), [], `answer ${i}: an update of the one before`);
  }
  const last = answers.at(-1)!;
  t.match(last, /^a-0\.m4s$/m, 'the first publisher\'s segments keep their names');
  t.ok(/^rec-\d+\.m4s$/m.test(last) && last.indexOf('rec-') < last.indexOf('a-0.m4s'), 'the recording before the archive still first');
  t.notMatch(last, /^rec-17000000(0[89]|1\d)\d{3}\.m4s$/m, 'no recorded segment of the archived time listed');
  t.match(last, /a-5\.m4s\n#EXT-X-DISCONTINUITY\n#EXT-X-MAP:URI="b-init0\.mp4"\n#EXT-X-PROGRAM-DATE-TIME:\S+\n#EXTINF:1,\nb-0\.m4s/, 'a discontinuity, the new init, then the new packager\'s segments');
  t.ok(files.has('/rec/cam/cmaf-a/a-0.m4s') && files.has('/rec/cam/cmaf-a/b-0.m4s'), 'both publishers\' segments archived');
  archive.close();
  await waitFor(() => files.size === 0, { what: 'every archived file deleted at the close' });
});
