import t from 'tap';
import { parseRange } from '../../sdk/fs-send.ts';
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

// a run of spaces took quadratic time in the former RegExp (5 s for 60,000; here about a minute,
// past the test's limit): the header is taken apart in one pass now
t.test('header values that made the RegExp backtrack answer at once', async (t) => {
  const spaces = ' '.repeat(200_000);
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  t.equal(parseBasicAuthorization(`Basic ${spaces}a b`), 'missing');
  t.same(parseBasicAuthorization(`Basic ${spaces}`), { username: '', password: '' }, 'an empty credential, as before');
  t.same(parseBasicAuthorization(`Basic${spaces}${b64('u:p')}${spaces}`), { username: 'u', password: 'p' });
  t.same(parseBasicAuthorization(`basic\t${b64('u:p')}`), { username: 'u', password: 'p' });
  t.equal(parseBasicAuthorization('Basic'), 'missing');
  t.equal(parseRange(`bytes=${spaces}x`, 10), undefined);
  t.equal(parseRange(`bytes=${spaces}-${spaces}`, 10), undefined);
  t.same(parseRange(`bytes= 2 - 4 `, 10), { start: 2, end: 4 });
  t.same(parseRange('bytes=-2', 10), { start: 8, end: 9 });
  t.same(parseRange('bytes=5-', 10), { start: 5, end: 9 });
  t.equal(parseRange('bytes=0-1,3-4', 10), undefined, 'several ranges: the whole file');
  t.equal(parseRange('bytes=12-', 10), null);
  t.equal(parseRange('items=0-1', 10), undefined);
});
