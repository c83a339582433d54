import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { checkPlaylist, checkUpdate } from '../../../plugins/llhls/check.ts';

/*
 * The RFC 8216bis checker (plugins/llhls/check.ts): the hand-written fixtures each break one rule
 * of a valid low-latency playlist (fixtures/valid.m3u8), and the checker names that rule and line.
 */
const dir = new URL('./fixtures/', import.meta.url);
const fixture = (name: string): string => readFileSync(new URL(name, dir), 'utf8');

const broken: Record<string, [line: number, rule: string, says: RegExp][]> = {
  'no-extm3u.m3u8': [[1, 'extm3u', /#EXTM3U/]],
  'version.m3u8': [[2, 'version', /EXT-X-MAP needs EXT-X-VERSION 6 or higher, found 5/]],
  'target-duration.m3u8': [[9, 'target-duration', /EXTINF 2.6 rounds to 3, above EXT-X-TARGETDURATION 2/]],
  'part-target.m3u8': [[20, 'part-target', /DURATION 0.6 is above PART-TARGET 0.5/]],
  'part-min.m3u8': [[13, 'part-min', /0.3 is under 85% of PART-TARGET 0.5/]],
  'part-sum.m3u8': [[16, 'part-sum', /sum to 1.8 s, its EXTINF says 1.9/]],
  'media-sequence.m3u8': [[10, 'media-sequence', /before the first segment \(line 8\)/]],
  'discontinuity-sequence.m3u8': [[7, 'discontinuity-sequence', /decimal integer, not "-1"/]],
  'preload-hint-order.m3u8': [[20, 'preload-hint', /after the last part or segment \(line 21\)/]],
  'preload-hint-type.m3u8': [[21, 'preload-hint', /PART or MAP, not "SEGMENT"/]],
  'server-control.m3u8': [[4, 'server-control', /PART-HOLD-BACK=0.8 is under twice the part target \(1\)/]],
  'can-skip-until.m3u8': [[4, 'server-control', /CAN-SKIP-UNTIL=8 is under six target durations \(12\)/]],
  'skip.m3u8': [[8, 'skip', /last 4.8 s, under CAN-SKIP-UNTIL 12/]],
  'program-date-time.m3u8': [[11, 'program-date-time', /3.000 s after the previous one, whose segment lasts 2 s/]],
  'program-date-time-open.m3u8': [[18, 'program-date-time', /2.800 s after the previous one, whose segment lasts 1.8 s/]],
  'rendition-report.m3u8': [[23, 'rendition-report', /needs LAST-MSN, a decimal integer/]],
};

t.test('the valid fixture passes', async (t) => {
  t.same(checkPlaylist(fixture('valid.m3u8')), []);
  t.same(checkPlaylist(fixture('valid.m3u8').replaceAll('\n', '\r\n')), [], 'CRLF lines too');
});

t.test('each broken fixture: its rule, its line, a precise message', async (t) => {
  const files = readdirSync(dir).filter((f) => f.endsWith('.m3u8') && f !== 'valid.m3u8');
  t.same(files.sort(), Object.keys(broken).sort(), 'every fixture has its expectation');
  for (const [file, expected] of Object.entries(broken)) {
    const found = checkPlaylist(fixture(file));
    t.same(found.map((v) => [v.line, v.rule]), expected.map(([line, rule]) => [line, rule]), file);
    for (const [i, [, , says]] of expected.entries()) t.match(found[i]?.message, says, `${file}: message`);
  }
});

t.test('rules without a fixture of their own', async (t) => {
  const valid = fixture('valid.m3u8');
  const rules = (text: string): string[] => checkPlaylist(text).map((v) => `${v.line}:${v.rule}`);
  t.same(rules(valid.replace('#EXT-X-TARGETDURATION:2\n', '')), ['1:target-duration'], 'no target duration');
  t.same(rules(valid.replace(/#EXT-X-PART-INF:[^\n]*\n/, '')), ['8:part-target'], 'parts without PART-INF');
  t.same(rules(valid.replace(/#EXT-X-SERVER-CONTROL:[^\n]*\n/, '')), ['1:server-control'], 'LL without server control');
  t.same(rules(valid.replace('CAN-BLOCK-RELOAD=YES,', '')), ['4:server-control'], 'LL without blocking reload');
  t.same(rules(valid.replace('HOLD-BACK=6', 'HOLD-BACK=5')), ['4:server-control'], 'HOLD-BACK under three targets');
  t.same(rules(valid.replace(/(#EXT-X-PRELOAD-HINT[^\n]*\n)/, '$1$1')), ['22:preload-hint'], 'two hints of one type');
  t.same(rules(valid.replace('#EXT-X-PROGRAM-DATE-TIME:2024-01-01T12:00:02.000Z', '#EXT-X-DISCONTINUITY\n#EXT-X-PROGRAM-DATE-TIME:2024-01-01T13:00:00.000Z')),
    ['19:program-date-time'], 'a discontinuity allows a jump (the next date then follows the new one)');
  t.same(rules(valid.replace('s10.m4s\n', '')), ['9:syntax'], 'EXTINF without its URI');
  t.same(rules(valid.replace('URI="s12.p1.m4s"', 'URI=')), ['20:syntax'], 'a part without URI');
  t.same(rules(valid.replace('SEQUENCE:10', 'SEQUENCE:x')), ['6:media-sequence']);
  const report = '#EXT-X-RENDITION-REPORT:URI="../lo/index.m3u8",LAST-MSN=12,LAST-PART=1\n';
  t.same(rules(valid + report), [], 'a rendition report');
  t.same(rules(valid + report + report), ['23:rendition-report'], 'two reports of one rendition');
  t.same(rules(valid + report.replace('LAST-PART=1', 'LAST-PART=x')), ['22:rendition-report'], 'LAST-PART not an integer');
  t.same(rules(valid + '#EXT-X-RENDITION-REPORT:LAST-MSN=1\n'), ['22:rendition-report'], 'no URI');
});

t.test('between two answers: media and discontinuity sequences', async (t) => {
  const pl = (ms: number, ds: number, uris: string[], disc: number[] = []): string =>
    `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:${ms}\n` +
    (ds ? `#EXT-X-DISCONTINUITY-SEQUENCE:${ds}\n` : '') +
    uris.map((u, i) => `${disc.includes(i) ? '#EXT-X-DISCONTINUITY\n' : ''}#EXTINF:2,\n${u}\n`).join('');
  t.same(checkUpdate(pl(1, 0, ['a', 'b', 'c'], [1]), pl(3, 1, ['c', 'd'])), [], 'one discontinuity left');
  t.same(checkUpdate(pl(1, 0, ['a', 'b', 'c'], [1]), pl(3, 0, ['c', 'd'])).map((v) => v.rule), ['discontinuity-sequence']);
  t.same(checkUpdate(pl(3, 0, ['c']), pl(2, 0, ['b', 'c'])).map((v) => v.rule), ['media-sequence'], 'went back');
  t.same(checkUpdate(pl(1, 0, ['a', 'b']), pl(2, 0, ['x', 'c'])).map((v) => [v.line, v.rule]), [[5, 'media-sequence']], 'segment 2 changed');
});

t.test('a long playlist is checked whole (2,000 segments: every line read once)', async (t) => {
  const big = fixture('valid.m3u8').split('\n').slice(0, 7).join('\n') + '\n' +
    Array.from({ length: 2000 }, (_, i) => `#EXTINF:2,\ns${i}.m4s\n`).join('');
  t.same(checkPlaylist(big), [], 'valid');
  const broken = big.replace('#EXTINF:2,\ns1500.m4s', '#EXTINF:9,\ns1500.m4s');
  t.same(checkPlaylist(broken).map((v) => v.rule), ['target-duration'], 'a fault deep in it is found');
});
