import t from 'tap';
import { readFileSync } from 'node:fs';
import { LineSplitter, messageStart, splitLines, stripLevel } from '../../../../core/process/parse/lines.ts';

const fixture = (name: string) => readFileSync(new URL(`../../../fixtures/ffmpeg/${name}`, import.meta.url), 'utf8');

function collect(chunks: (string | Uint8Array)[], maxLength?: number): string[] {
  const out: string[] = [];
  const s = new LineSplitter((l) => out.push(l), maxLength);
  for (const c of chunks) s.push(c);
  s.end();
  return out;
}

t.test('splits on \\r, \\n and \\r\\n, skipping empty lines', async (t) => {
  const cases: [string, (string | Uint8Array)[], string[]][] = [
    ['lf', ['a\nb\n'], ['a', 'b']],
    ['cr (stats updates)', ['frame=1\rframe=2\r'], ['frame=1', 'frame=2']],
    ['crlf', ['a\r\nb\r\n'], ['a', 'b']],
    ['crlf cut between chunks', ['a\r', '\nb'], ['a', 'b']],
    ['line cut in the middle', ['fra', 'me=1', '2\rsi', 'ze=3\n'], ['frame=12', 'size=3']],
    ['separator at chunk start', ['abc', '\ndef'], ['abc', 'def']],
    ['no final line end', ['x\ny'], ['x', 'y']],
    ['blank lines', ['\n\n\r\r\na\n\n'], ['a']],
    ['utf-8 cut inside a character', [new Uint8Array([0x63, 0x61, 0x66, 0xc3]), new Uint8Array([0xa9, 0x0a])], ['café']],
  ];
  for (const [name, chunks, want] of cases) t.same(collect(chunks), want, name);
});

t.test('a line without end is emitted once it reaches the maximum length', async (t) => {
  t.same(collect(['abcd', 'efgh', 'ij\n'], 8), ['abcdefgh', 'ij']);
});

t.test('chunking does not change the lines of a real recording', async (t) => {
  const text = fixture('hls-av.stderr');
  const whole = splitLines(text);
  t.equal(whole.filter((l) => l.startsWith('frame=')).length, 7, 'seven \\r-terminated stats updates');
  for (const size of [1, 7, 64, 1000]) {
    const chunks: Uint8Array[] = [];
    const bytes = Buffer.from(text, 'utf8');
    for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
    t.same(collect(chunks), whole, `chunks of ${size} bytes`);
  }
});

t.test('level tags of -loglevel level+info are recognised', async (t) => {
  const cases: [string, string][] = [
    ['[info] frame=  1', 'frame=  1'],
    ['[warning] something', 'something'],
    ['[hls @ 0x55] Opening', '[hls @ 0x55] Opening'],
    ['[info]frame=1', '[info]frame=1'],
    ['plain', 'plain'],
  ];
  for (const [line, want] of cases) t.equal(stripLevel(line), want, line);
  t.equal(messageStart('[error] x'), 8);
});
