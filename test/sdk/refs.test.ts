import t from 'tap';
import { createServiceRef, optional } from '../../sdk/index.ts';

t.test('service refs carry their multiplicity and optionality', async (t) => {
  const single = createServiceRef<number>('x');
  const multi = createServiceRef<number, true>('y', { multiple: true });
  t.equal(single.multiple, false);
  t.equal(multi.multiple, true);
  t.equal(optional(single).optional, true);
  t.ok(Object.isFrozen(single));
});
