import t from 'tap';
import { randomBytes } from 'node:crypto';
import { signPeer, takeThreadPeer } from '../../../../core/http/threads/peer-header.ts';
import { THREAD_PEER_HEADER } from '../../../../sdk/index.ts';

const key = randomBytes(32);

t.test('a peer signed with the boot key is believed, and the header removed', async (t) => {
  const headers: Record<string, string> = { [THREAD_PEER_HEADER]: signPeer(key, '203.0.113.7') };
  t.equal(takeThreadPeer(headers, key), '203.0.113.7');
  t.notOk(THREAD_PEER_HEADER in headers);
});

t.test('a forged or foreign header gets nothing (and is removed too)', async (t) => {
  const cases = [
    '203.0.113.7',
    '203.0.113.7 00',
    `203.0.113.7 ${'0'.repeat(64)}`,
    signPeer(randomBytes(32), '203.0.113.7'),
    // a signature of another address
    `203.0.113.7 ${signPeer(key, '198.51.100.1').split(' ')[1]}`,
  ];
  for (const value of cases) {
    const headers: Record<string, string> = { [THREAD_PEER_HEADER]: value };
    t.equal(takeThreadPeer(headers, key), undefined, value);
    t.notOk(THREAD_PEER_HEADER in headers);
  }
  // without threads there is no key: never believed
  t.equal(takeThreadPeer({ [THREAD_PEER_HEADER]: signPeer(key, '203.0.113.7') }, undefined), undefined);
});
