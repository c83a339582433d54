import t from 'tap';
import { stripJsonComments } from '../../../core/config/jsonc.ts';

t.test('comments and trailing commas go, strings stay', async (t) => {
  const text = `// head
{
  "url": "https://example.com/a//b", /* inline */
  "s": "quote \\" // not a comment",
  "list": [1, 2,],
  "comma": ",}",
  /* multi
     line */
  "n": 1,
}`;
  const stripped = stripJsonComments(text);
  t.same(JSON.parse(stripped), { url: 'https://example.com/a//b', s: 'quote " // not a comment', list: [1, 2], comma: ',}', n: 1 });
  t.equal(stripped.split('\n').length, text.split('\n').length, 'lines keep their numbers for error messages');
  t.equal(stripJsonComments('{"a": 1}'), '{"a": 1}', 'plain JSON is untouched');
});
