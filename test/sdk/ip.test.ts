import t from 'tap';
import { isIP } from 'node:net';
import { ipFamily } from '../../sdk/ip.ts';

/*
 * sdk/ip.ts answers as `net.isIP` does (its grammar without node's large IPv6 expression): edge
 * cases of each rule, then a generated corpus (a fixed seed: the same cases every run) of random
 * strings over the characters addresses are made of and of valid addresses with one change each.
 */

t.test('the grammar\'s edges, as net.isIP', async (t) => {
  const cases = [
    '', '0.0.0.0', '255.255.255.255', '256.1.1.1', '01.2.3.4', '1.2.3', '1.2.3.4.5', '1.2.3.4 ', ' 1.2.3.4', '1..3.4', '1.2.3.-4',
    '::', '::1', '1::', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7::', '::2:3:4:5:6:7:8', '1::2:3:4:5:6:7', '1::2:3:4:5:6:7:8',
    ':::', '1:::2', ':1::2', '1::2::3', '1:2:3:4:5:6:7:', ':1:2:3:4:5:6:7', '12345::', 'g::1', 'FFFF::ffff', 'fffff::1',
    '::ffff:1.2.3.4', '::1.2.3.4', '1:2:3:4:5:6:1.2.3.4', '1:2:3:4:5:1.2.3.4', '1:2:3:4:5::1.2.3.4', '1:2:3:4:5:6::1.2.3.4',
    '1.2.3.4::', '::1.2.3.4:5', '::01.2.3.4', 'fe80::1%eth0', 'fe80::1%', 'fe80::1%a%b', 'fe80::1%a.b:c-d', '1.2.3.4%eth0', '%eth0',
    '[::1]', '::1/128', '0:0:0:0:0:0:0:0', '::ffff:255.255.255.256', '1:2:3:4:5:6:7:1.2.3.4',
    '\x10::1', '::\x11', 'f\x06::1', '1.2.3.\x14', '\x10.1.1.1', '1.2.3.4.', '.1.2.3.4', '1.2.3..4', '0.0.0.00', '999.1.1.1', '1.2.3.4\n',
  ];
  for (const c of cases) t.equal(ipFamily(c), isIP(c), JSON.stringify(c));
});

t.test('a generated corpus, as net.isIP', async (t) => {
  let seed = 0x2f6e2b1;
  const rand = (n: number) => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed % n; };
  const pick = (s: string) => s[rand(s.length)]!;
  const valid = ['1.2.3.4', '10.0.0.255', '::1', 'fe80::1:2', '2001:db8::8a2e:370:7334', '::ffff:192.0.2.1', '1:2:3:4:5:6:7:8', 'fe80::a%eth0'];
  const alphabet = '0123456789abcdefABCDEFgx:.%-[] \x10\x16\x19\n\u0660';
  let mismatches = 0;
  let sixes = 0;
  for (let i = 0; i < 60_000; i++) {
    let s: string;
    if (i % 2 === 0) {
      s = '';
      const n = rand(24);
      for (let j = 0; j < n; j++) s += pick(i % 4 === 0 ? '0123456789abcdef:.' : alphabet);
    } else {
      const v = valid[rand(valid.length)]!;
      const at = rand(v.length + 1);
      const kind = rand(3);
      s = kind === 0 ? v.slice(0, at) + pick(alphabet) + v.slice(at) : kind === 1 ? v.slice(0, at) + v.slice(at + 1) : v.slice(0, at) + pick(alphabet) + v.slice(at + 1);
    }
    const want = isIP(s);
    if (want === 6) sixes++;
    if (ipFamily(s) !== want && mismatches++ < 5) t.fail(`${JSON.stringify(s)}: ${ipFamily(s)} where net.isIP says ${want}`);
  }
  t.equal(mismatches, 0, 'no case answered differently');
  t.ok(sixes > 1000, `${sixes} IPv6 addresses among them`);
});
