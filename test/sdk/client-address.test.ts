import t from 'tap';
import { addressKey, CidrSet, normalizeIp } from '../../sdk/index.ts';

t.test('addressKey: IPv4 as is, IPv6 on its /64', async (t) => {
  t.equal(addressKey('10.0.0.1'), '10.0.0.1');
  t.equal(addressKey('2001:db8:1:2::1'), '2001:db8:1:2::/64');
  t.equal(addressKey('2001:db8:1:2:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64', 'same /64, same key');
  t.equal(addressKey('2001:0db8:0001:0002:0:0:0:9'), '2001:db8:1:2::/64', 'leading zeros do not matter');
  t.not(addressKey('2001:db8:1:3::1'), addressKey('2001:db8:1:2::1'), 'another /64 is another client');
  t.equal(addressKey('::1'), '0:0:0:0::/64');
  t.equal(addressKey('2001:db8::'), '2001:db8:0:0::/64');
  t.equal(addressKey('64:ff9b::192.0.2.1'), '64:ff9b:0:0::/64', 'an embedded IPv4 tail');
  t.equal(addressKey('not-an-ip'), 'not-an-ip');
  t.equal(normalizeIp('[::ffff:10.0.0.1]'), '10.0.0.1');
});

t.test('CidrSet: v4 and v6 networks, a bare address as its own host, bad entries skipped', async (t) => {
  const set = new CidrSet(['10.0.0.0/8', '2001:db8::/32', '192.0.2.7', '[::ffff:198.51.100.0]/24', 'nonsense/8']);
  t.equal(set.size, 4, 'the entry that does not parse is skipped');
  t.ok(set.has('10.200.0.1'));
  t.ok(set.has('2001:db8:ffff::1'));
  t.ok(set.has('192.0.2.7'));
  t.notOk(set.has('192.0.2.8'), 'a bare address is a /32');
  t.ok(set.has('198.51.100.9'), 'a mapped IPv4 entry matches the IPv4 address');
  t.notOk(set.has('11.0.0.1'));
  t.notOk(set.has('not-an-ip'));
  t.notOk(new CidrSet([]).has('10.0.0.1'), 'an empty set holds nothing');
});
