import t from 'tap';
import { formerNames, holderAt, MAX_FORMER_NAMES, namedAt, withFormer } from '../../../plugins/iam/former.ts';
import { parseUsers, Users, type UsersDoc } from '../../../plugins/iam/users.ts';
import type { StateDocument } from '../../../sdk/index.ts';

/*
 * The user that had a name when a process was made (its maker, kept by name): the one that has
 * the name and had it by then, else the one renamed from it since; a user given the name later,
 * made or renamed to it, is not it.
 */

const user = (name: string, named_at: number, former: { name: string; from: number; until: number }[] = []) => ({ name, named_at, former });

t.test('the holder of a name at a time', async (t) => {
  const carol = user('carol', 200, [{ name: 'alice', from: 100, until: 200 }]);
  const alice = user('alice', 300);
  const users = [carol, alice];
  t.equal(holderAt(users, 'alice', 150), carol, 'made before the rename: the renamed user');
  t.equal(holderAt(users, 'alice', 200), carol, 'in the rename\'s second: still hers');
  t.equal(holderAt(users, 'alice', 300), alice, 'made after the new alice: hers');
  t.equal(holderAt(users, 'alice', 250), undefined, 'between the rename and the new alice: no one had the name');
  t.equal(holderAt(users, 'carol', 250), carol, 'her current name, once she had it');
  t.equal(holderAt(users, 'carol', 150), undefined, 'her current name before she had it');
  t.equal(holderAt(users, 'alice', 50), undefined, 'before any user had the name');
  t.equal(holderAt(users, 'bob', 150), undefined);
  // an older user renamed to a name a deleted user had: not the deleted user's maker
  const old = user('alice', 500, [{ name: 'dave', from: 10, until: 500 }]);
  t.equal(holderAt([old], 'alice', 400), undefined, 'a process made under the deleted alice is no one\'s');
  t.equal(holderAt([old], 'alice', 500), old, 'one made once the name was hers is hers');
  t.equal(holderAt([old], 'dave', 400), old, 'and what she made as dave is still hers');
  // renamed twice through the same name: who had it at the time
  const erin = user('erin', 40, [{ name: 'x', from: 5, until: 20 }, { name: 'y', from: 20, until: 40 }]);
  const fay = user('fay', 60, [{ name: 'x', from: 30, until: 60 }]);
  t.equal(holderAt([fay, erin], 'x', 15), erin, 'erin had x until 20');
  t.equal(holderAt([fay, erin], 'x', 45), fay, 'fay had it from 30 to 60');
  t.equal(holderAt([fay, erin], 'x', 25), undefined, 'no one between');
  // two users had the name within one second: no one is its holder then (found live: a renamed user's ladder became the new holder's)
  const frank2 = user('frank2', 900, [{ name: 'frank', from: 100, until: 900 }]);
  const gina = user('frank', 900, [{ name: 'gina', from: 100, until: 900 }]);
  t.equal(holderAt([frank2, gina], 'frank', 900), undefined, 'renamed from it and given it in the second it was used: none');
  t.equal(holderAt([frank2, gina], 'frank', 899), frank2, 'the second before: the one renamed since');
  t.equal(holderAt([frank2, gina], 'frank', 901), gina, 'the second after: the one given it');
  const same = user('alice', 900, [{ name: 'alice', from: 100, until: 900 }, { name: 'carol', from: 900, until: 900 }]);
  t.equal(holderAt([same], 'alice', 900), same, 'one user renamed away and back within the second: hers');
});

t.test('former names as stored, bounded', async (t) => {
  t.same(formerNames(undefined), []);
  t.same(formerNames([{ name: 'a', from: 0, until: 1 }, { name: 2, from: 0, until: 1 }, { name: 'b', from: 1 }, null, { name: 'c', from: 0, until: 1.5 }]),
    [{ name: 'a', from: 0, until: 1 }], 'anything else dropped');
  t.same(formerNames([{ name: 'a', until: 5 }, { name: 'b', until: 9 }]), [{ name: 'a', from: 0, until: 5 }, { name: 'b', from: 5, until: 9 }],
    'as an earlier build wrote them: had since the one before ended');
  let f = withFormer([], 'n0', 0, 1);
  for (let i = 1; i < MAX_FORMER_NAMES + 5; i++) f = withFormer(f, `n${i}`, i, i + 1);
  t.equal(f.length, MAX_FORMER_NAMES, 'at most MAX_FORMER_NAMES');
  t.same(f.at(-1), { name: `n${MAX_FORMER_NAMES + 4}`, from: MAX_FORMER_NAMES + 4, until: MAX_FORMER_NAMES + 5 }, 'the most recent kept');
  t.equal(formerNames(Array.from({ length: 40 }, (_, i) => ({ name: `m${i}`, from: i, until: i + 1 }))).length, MAX_FORMER_NAMES);
  t.equal(namedAt({}, [], 7), 7, 'a store from before: named when made');
  t.equal(namedAt({}, [{ name: 'a', from: 0, until: 8 }], 7), 8, '... or at its last rename');
  t.equal(namedAt({ named_at: 9 }, [], 7), 9);
  t.equal(namedAt({ named_at: 'x' }, [], 7), 7);
  t.equal(namedAt({ named_at: -99_999_999_999 }, [], 7), 7, 'a negative time (hand-edited) is no time');
  t.same(formerNames([{ name: 'a', from: 0, until: -1 }, { name: 'b', from: 9, until: 5 }, { name: 'c', from: -5, until: 3 }]), [{ name: 'c', from: 0, until: 3 }],
    'an end before its start or before 1970 dropped, a negative start read as the one before');
});

t.test('the stored users answer the same (Users.heldAt, its lookup by name first)', async (t) => {
  const data = parseUsers({
    version: 2, users: [
      { name: 'frank2', created_at: 100, named_at: 900, former: [{ name: 'frank', from: 100, until: 900 }] },
      { name: 'frank', created_at: 100, named_at: 900, former: [{ name: 'gina', from: 100, until: 900 }] },
    ],
  }, 'users.json');
  // stand-in: a document kept in memory (no file)
  const doc = { path: 'users.json', data, save: async () => {}, commit: async (fn: () => unknown) => { fn(); } } as unknown as StateDocument<UsersDoc>;
  const users = new Users({ doc, maxUsers: 10, maxPolicies: 10, reserved: new Set() });
  t.equal(users.heldAt('frank', 900), undefined, 'renamed from it and given it in that second: none (found live)');
  t.equal(users.heldAt('frank', 899)?.name, 'frank2');
  t.equal(users.heldAt('frank', 901)?.name, 'frank', 'the user that has it, once it had it before');
});
