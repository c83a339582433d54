import t from 'tap';
import { randomBytes } from 'node:crypto';
import { signPeer, takeThreadPeer } from '../../../../core/http/threads/peer-header.ts';
import { THREAD_PEER_HEADER } from '../../../../sdk/index.ts';

const key = randomBytes(32);

t.test('a peer signed with the boot key is believed, and the header removed', async (t) => {
  const headers: Record<string, string> = { [THREAD_PEER_HEADER]: signPeer(key, '203.0.113.7') };
  t.same(takeThreadPeer(headers, key), { address: '203.0.113.7', https: false });
  t.notOk(THREAD_PEER_HEADER in headers);
  // a thread's HTTPS listener vouches for the protocol too
  t.same(takeThreadPeer({ [THREAD_PEER_HEADER]: signPeer(key, '2001:db8::1', true) }, key), { address: '2001:db8::1', https: true });
});

t.test('a forged or foreign header gets nothing (and is removed too)', async (t) => {
  const mac = (value: string) => value.slice(value.lastIndexOf(' ') + 1);
  const cases = [
    '203.0.113.7',
    '203.0.113.7 00',
    `203.0.113.7 ${'0'.repeat(64)}`,
    `203.0.113.7 http ${'0'.repeat(64)}`,
    signPeer(randomBytes(32), '203.0.113.7'),
    // a signature of another address
    `203.0.113.7 http ${mac(signPeer(key, '198.51.100.1'))}`,
    // HTTP claimed as HTTPS (the https access lists may be wider): the protocol is signed
    `203.0.113.7 https ${mac(signPeer(key, '203.0.113.7'))}`,
    `203.0.113.7 https x ${mac(signPeer(key, '203.0.113.7', true))}`,
  ];
  for (const value of cases) {
    const headers: Record<string, string> = { [THREAD_PEER_HEADER]: value };
    t.equal(takeThreadPeer(headers, key), undefined, value);
    t.notOk(THREAD_PEER_HEADER in headers);
  }
  // without threads there is no key: never believed
  t.equal(takeThreadPeer({ [THREAD_PEER_HEADER]: signPeer(key, '203.0.113.7') }, undefined), undefined);
});
