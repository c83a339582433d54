import t from 'tap';
import { atOrBeneath, beneath } from '../../../../core/process/confine/paths.ts';

/* The one test of "beneath" for the confinement's paths: a sibling that shares a prefix is not beneath. */
t.test('at or beneath, and strictly beneath', async (t) => {
  t.ok(atOrBeneath('/a/b', '/a/b'));
  t.ok(atOrBeneath('/a/b', '/a/b/c'));
  t.notOk(atOrBeneath('/a/b', '/a/bc'));
  t.notOk(atOrBeneath('/a/b', '/a'));
  t.ok(atOrBeneath('/', '/'));
  t.ok(atOrBeneath('/', '/x'));
  t.notOk(beneath('/a/b', '/a/b'));
  t.ok(beneath('/a/b', '/a/b/c'));
  t.notOk(beneath('/a/b', '/a/bc'));
  t.notOk(beneath('/', '/'));
  t.ok(beneath('/', '/x'));
});
