import t from 'tap';
import pino from 'pino';
import { ConnectionLimits, addressKey } from '../../../plugins/rtmp/limits.ts';

/* The per-address cap counts strangers; the service's own processes ({rtmp}) come from loopback. */

t.test('the per-address cap spares the service\'s own address, the total cap does not', async (t) => {
  const limits = new ConnectionLimits({ total: 6, perAddress: 2 }, pino({ level: 'silent' }));
  t.ok(limits.admit('127.0.0.2', 'a') && limits.admit('127.0.0.2', 'a'));
  t.notOk(limits.admit('127.0.0.2', 'a'), 'a stranger stops at the cap');
  for (let i = 0; i < 4; i++) t.ok(limits.admit(i % 2 ? '127.0.0.1' : '::1', 'self'), `own process ${i}`);
  t.notOk(limits.admit('127.0.0.1', 'self'), 'the total still holds');
  t.equal(addressKey('::ffff:127.0.0.1'), '127.0.0.1');
});
