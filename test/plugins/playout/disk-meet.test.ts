import t from 'tap';
import { meetDisks } from '../../../plugins/playout/disk-meet.ts';

/* What a relay switched by a caller other than its maker reaches: only what both reach. */
t.test('the disk both reach', async (t) => {
  const alice = { read: ['/d/alice/', '/d/shared/'], write: ['/d/alice/'] };
  const bob = { read: ['/d/bob/', '/d/shared/sub/', '/d/alicex/'], write: ['/d/shared/'] };
  t.same(meetDisks(alice, bob), { read: ['/d/shared/sub/'], write: [] }, 'a folder beneath one of the other\'s; a sibling sharing a prefix is not beneath');
  t.same(meetDisks(alice, undefined), alice, 'one that reaches all: the other\'s');
  t.same(meetDisks(undefined, bob), bob);
  t.equal(meetDisks(undefined, undefined), undefined, 'both all: all');
  t.same(meetDisks({ read: ['/d/'], write: [] }, { read: ['/d/x.ts', '/e/'], write: [] }), { read: ['/d/x.ts'], write: [] }, 'a file beneath a folder');
  t.same(meetDisks({ read: [], write: [] }, bob), { read: [], write: [] }, 'one that reaches nothing: nothing');
});
