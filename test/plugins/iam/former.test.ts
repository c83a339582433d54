import t from 'tap';
import { formerNames, holderAt, MAX_FORMER_NAMES, withFormer } from '../../../plugins/iam/former.ts';

/*
 * The user that had a name when a process was made (its maker, kept by name): the one of that
 * name made by then, else the one renamed from it since; a user given the name later is not it.
 */

const user = (name: string, created_at: number, former: { name: string; until: number }[] = []) => ({ name, created_at, former });

t.test('the holder of a name at a time', async (t) => {
  const carol = user('carol', 100, [{ name: 'alice', until: 200 }]);
  const alice = user('alice', 300);
  const users = [carol, alice];
  t.equal(holderAt(users, 'alice', 150), carol, 'made before the rename: the renamed user');
  t.equal(holderAt(users, 'alice', 200), carol, 'in the rename\'s second: still hers');
  t.equal(holderAt(users, 'alice', 300), alice, 'made after the new alice: hers');
  t.equal(holderAt(users, 'alice', 250), undefined, 'between the rename and the new alice: no one had the name');
  t.equal(holderAt(users, 'carol', 150), carol, 'the current name, before the rename too (the user existed)');
  t.equal(holderAt(users, 'alice', 50), undefined, 'before any user of the name was made');
  t.equal(holderAt(users, 'bob', 150), undefined);
  // renamed twice through the same name: the earliest rename after the time decides
  const dave = user('dave', 10, [{ name: 'x', until: 20 }, { name: 'y', until: 30 }]);
  const erin = user('erin', 5, [{ name: 'x', until: 40 }]);
  t.equal(holderAt([erin, dave], 'x', 15), dave, 'dave held x until 20');
  t.equal(holderAt([erin, dave], 'x', 35), erin, 'erin held it until 40');
});

t.test('former names as stored, bounded', async (t) => {
  t.same(formerNames(undefined), []);
  t.same(formerNames([{ name: 'a', until: 1 }, { name: 2, until: 1 }, { name: 'b' }, null, { name: 'c', until: 1.5 }]), [{ name: 'a', until: 1 }], 'anything else dropped');
  let f = withFormer([], 'n0', 1);
  for (let i = 1; i < MAX_FORMER_NAMES + 5; i++) f = withFormer(f, `n${i}`, i + 1);
  t.equal(f.length, MAX_FORMER_NAMES, 'at most MAX_FORMER_NAMES');
  t.equal(f.at(-1)!.name, `n${MAX_FORMER_NAMES + 4}`, 'the most recent kept');
  t.equal(formerNames(Array.from({ length: 40 }, (_, i) => ({ name: `m${i}`, until: i }))).length, MAX_FORMER_NAMES);
});
