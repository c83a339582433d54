import t from 'tap';
import { isShortId, shortId } from '../../sdk/short-id.ts';

t.test('shortId makes 22 base57 letters; isShortId accepts exactly that shape', async (t) => {
  const ids = Array.from({ length: 200 }, () => shortId());
  t.ok(ids.every((id) => isShortId(id)), 'every made id passes');
  t.equal(new Set(ids).size, ids.length, 'no two alike');
  t.ok(isShortId('23456789ABCDEFGHJKLMNP'), 'the alphabet\'s first 22 letters');
  for (const bad of ['', 'x', '23456789ABCDEFGHJKLMN', '23456789ABCDEFGHJKLMNPQ', '0000000000000000000000', 'IIIIIIIIIIIIIIIIIIIIII', 'llllllllllllllllllllll', 'OOOOOOOOOOOOOOOOOOOOOO', '23456789ABCDEFGHJKLMN%', '23456789ABCDEFGHJKLMN\n']) {
    t.notOk(isShortId(bad), JSON.stringify(bad));
  }
});
