import t from 'tap';
import { randomBytes } from 'node:crypto';
import { signPeer, takeThreadPeer } from '../../../../core/door/threads/peer-header.ts';
import { THREAD_PEER_HEADER } from '../../../../core/door/threads/module.ts';

const key = randomBytes(32);
const PATH = '/api/v3/process';
const sign = (peer: string, https = false, k = key) => signPeer(k, peer, https, 'GET', PATH);
const take = (value: string, k: Buffer = key, method = 'GET', url = PATH, headers: Record<string, string> = {}) =>
  takeThreadPeer({ ...headers, [THREAD_PEER_HEADER]: value }, k, method, url);

t.test('a peer signed with the boot key for this request is believed, and the header removed', async (t) => {
  const headers: Record<string, string> = { [THREAD_PEER_HEADER]: sign('203.0.113.7') };
  t.same(takeThreadPeer(headers, key, 'GET', PATH), { address: '203.0.113.7', https: false });
  t.notOk(THREAD_PEER_HEADER in headers);
  // a thread's HTTPS listener vouches for the protocol too
  t.same(take(sign('2001:db8::1', true)), { address: '2001:db8::1', https: true });
  // the same header again: main keeps no nonces for this hop (the internal listener's connections stop replays)
  const once = sign('203.0.113.7');
  t.ok(take(once) && take(once), 'no nonce memory on the thread hop');
  // a body the thread streams is not signed: believed (on the internal listener only, see access.ts)
  const upload = signPeer(key, '203.0.113.7', false, 'PUT', '/memfs/a.bin');
  t.same(take(upload, key, 'PUT', '/memfs/a.bin', { 'content-length': '5' }), { address: '203.0.113.7', https: false });
});

t.test('a forged, foreign or misplaced header gets nothing (and is removed too)', async (t) => {
  const good = sign('203.0.113.7');
  const [ip, proto, ms, nonce, digest, mac] = good.split(' ');
  const cases: [string, string, string?, string?][] = [
    ['an address alone', '203.0.113.7'],
    ['the old format', `203.0.113.7 http ${'0'.repeat(64)}`],
    ['a guessed mac', `${ip} ${proto} ${ms} ${nonce} ${digest} ${'0'.repeat(64)}`],
    ['another key', sign('203.0.113.7', false, randomBytes(32))],
    ['another address', `198.51.100.1 ${proto} ${ms} ${nonce} ${digest} ${mac}`],
    // HTTP claimed as HTTPS (the https access lists may be wider): the protocol is signed
    ['HTTP claimed as HTTPS', `${ip} https ${ms} ${nonce} ${digest} ${mac}`],
    ['a field too many', `${good} x`],
    ['another method', good, 'POST'],
    ['another URL', good, 'GET', '/api/v3/config'],
    ['another time', `${ip} ${proto} ${Number(ms) - 1} ${nonce} ${digest} ${mac}`],
  ];
  for (const [what, value, method, url] of cases) {
    const headers: Record<string, string> = { [THREAD_PEER_HEADER]: value };
    t.equal(takeThreadPeer(headers, key, method ?? 'GET', url ?? PATH), undefined, what);
    t.notOk(THREAD_PEER_HEADER in headers, `${what}: removed`);
  }
  t.equal(takeThreadPeer({ [THREAD_PEER_HEADER]: good }, key, 'GET', PATH, Date.now() + 31_000), undefined, 'out of the window');
  // without threads (or off the internal listener) there is no key: never believed
  t.equal(takeThreadPeer({ [THREAD_PEER_HEADER]: good }, undefined, 'GET', PATH), undefined);
});
