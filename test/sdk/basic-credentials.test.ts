import t from 'tap';
import * as crypto from 'node:crypto';
import { basicCredentialsMatch as credentialsMatch, parseBasicAuthorization, safeEqual } from '../../sdk/basic-credentials.ts';

t.test('safeEqual compares any lengths correctly', async (t) => {
  t.ok(safeEqual('secret', 'secret'));
  t.notOk(safeEqual('secret', 'secreT'));
  t.notOk(safeEqual('secret', 'secret '), 'longer');
  t.notOk(safeEqual('', 'secret'), 'empty');
  t.notOk(safeEqual('s'.repeat(100_000), 'secret'), 'much longer: no throw from timingSafeEqual');
  t.ok(safeEqual('ünïcödé', 'ünïcödé'));
});

t.test('credentials go through timingSafeEqual over equal-length digests, both always', async (t) => {
  const calls: Array<[number, number]> = [];
  const mocked = await t.mockImport<typeof import('../../sdk/basic-credentials.ts')>('../../sdk/basic-credentials.ts', {
    'node:crypto': {
      ...crypto,
      timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
        calls.push([a.byteLength, b.byteLength]);
        return crypto.timingSafeEqual(a, b);
      },
    },
  });
  const expected = { username: 'admin', password: 'a-long-password' };
  t.notOk(mocked.basicCredentialsMatch({ username: 'x', password: 'y' }, expected));
  t.equal(calls.length, 2, 'the password is compared even when the user name is wrong (no early exit)');
  t.ok(calls.every(([a, b]) => a === 32 && b === 32), 'digests of equal length');
  calls.length = 0;
  t.ok(mocked.basicCredentialsMatch({ ...expected }, expected));
  t.equal(calls.length, 2);
});

t.test('an empty configured credential never matches', async (t) => {
  t.notOk(credentialsMatch({ username: '', password: '' }, { username: '', password: '' }));
  t.notOk(credentialsMatch({ username: 'a', password: '' }, { username: 'a', password: '' }));
});

t.test('parseBasicAuthorization: the scheme in any case, the user up to the first colon; missing and malformed apart', async (t) => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  t.same(parseBasicAuthorization(`Basic ${b64('u:p:q')}`), { username: 'u', password: 'p:q' });
  t.same(parseBasicAuthorization(`bAsIc   ${b64('only')}  `), { username: 'only', password: '' });
  t.equal(parseBasicAuthorization(undefined), 'missing');
  t.equal(parseBasicAuthorization(['Basic x']), 'missing', 'not a string');
  t.equal(parseBasicAuthorization(`Bearer ${b64('u:p')}`), 'missing');
  t.equal(parseBasicAuthorization('Basic a'), 'malformed', 'a length no base64 has');
  t.equal(parseBasicAuthorization('Basic ab$d'), 'malformed');
});
