import t from 'tap';
import { createHash } from 'node:crypto';
import { CLIENT_SIGNATURE_WINDOW_MS, ClientVerifier, signClient, type ClientClaim } from '../../sdk/client-signature.ts';

/*
 * The one signed client-address scheme (serving threads to main, node to node): what a header
 * vouches for, and everything it must not vouch for.
 */

const H = 'x-test-client';
const key = Buffer.alloc(32, 3);
const NOW = 1_800_000_000_000;
const claim: ClientClaim = { address: '203.0.113.9', https: true, receiver: 'b', method: 'GET', url: '/api/v3/process/x?y=1' };
const headersWith = (value: string, extra: Record<string, string> = {}): Record<string, string> => ({ ...extra, [H]: value });

t.test('a header signed for this receiver and request is believed once and removed', async (t) => {
  const v = new ClientVerifier({ receiver: 'b' });
  const value = signClient(key, claim, NOW);
  t.match(value, /^203\.0\.113\.9 https 1800000000000 [A-Za-z0-9_-]{16,64} - [0-9a-f]{64}$/, 'the documented format');
  const headers = headersWith(value);
  t.same(v.take(key, headers, H, 'GET', claim.url, NOW), { address: '203.0.113.9', https: true });
  t.notOk(H in headers, 'removed: no route sees it');
  t.equal(v.take(key, headersWith(value), H, 'GET', claim.url, NOW + 1), undefined, 'the same header again: a replay');
  t.not(signClient(key, claim, NOW), value, 'each signature has its own nonce');
  t.equal(v.take(key, {}, H, 'GET', claim.url, NOW), undefined, 'no header: nothing');
});

t.test('forged, foreign, misplaced or stale headers vouch for nothing, and are removed', async (t) => {
  const v = new ClientVerifier({ receiver: 'b' });
  const good = () => signClient(key, claim, NOW);
  const field = (value: string, i: number, to: string) => value.split(' ').map((f, n) => (n === i ? to : f)).join(' ');
  const cases: [string, string, { method?: string; url?: string; at?: number; extra?: Record<string, string> }][] = [
    ['garbage', 'nonsense', {}],
    ['another key', signClient(Buffer.alloc(32, 4), claim, NOW), {}],
    ['a guessed mac', field(good(), 5, 'ab'.repeat(32)), {}],
    ['another address', field(good(), 0, '127.0.0.1'), {}],
    ['HTTPS turned to HTTP', field(good(), 1, 'http'), {}],
    ['another time', field(good(), 2, String(NOW + 1)), {}],
    ['another nonce', field(good(), 3, 'n'.repeat(16)), {}],
    ['a digest added', field(good(), 4, 'f'.repeat(64)), {}],
    ['a field too many', `${good()} x`, {}],
    ['the former cluster format', `203.0.113.9 ${NOW} ${'n'.repeat(16)} - ${'ab'.repeat(32)}`, {}],
    ['signed for another receiver', signClient(key, { ...claim, receiver: 'c' }, NOW), {}],
    ['another method', good(), { method: 'DELETE' }],
    ['another URL', good(), { url: '/api/v3/process/x?y=2' }],
    ['after the window', good(), { at: NOW + CLIENT_SIGNATURE_WINDOW_MS + 1 }],
    ['before the window', good(), { at: NOW - CLIENT_SIGNATURE_WINDOW_MS - 1 }],
    ['a body the signature does not cover', good(), { extra: { 'content-length': '7' } }],
    ['a chunked body the signature does not cover', good(), { extra: { 'transfer-encoding': 'chunked' } }],
  ];
  for (const [what, value, o] of cases) {
    const headers = headersWith(value, o.extra);
    t.equal(v.take(key, headers, H, o.method ?? 'GET', o.url ?? claim.url, o.at ?? NOW), undefined, what);
    t.notOk(H in headers, `${what}: removed`);
  }
  const headers = headersWith(good());
  t.equal(v.take(undefined, headers, H, 'GET', claim.url, NOW), undefined, 'no key: nothing is believed');
  t.notOk(H in headers);
  t.equal(v.take(key, { [H]: [good(), good()] } as unknown as Record<string, string>, H, 'GET', claim.url, NOW), undefined, 'the header twice');
});

t.test('a signed body: its digest is what the receiver checks the body against', async (t) => {
  const v = new ClientVerifier({ receiver: 'b' });
  const body = Buffer.from('{"note":"one"}');
  const value = signClient(key, { ...claim, method: 'PUT', body }, NOW);
  const sha = createHash('sha256').update(body).digest('hex');
  t.equal(value.split(' ')[4], sha);
  t.same(v.take(key, headersWith(value, { 'content-length': String(body.length) }), H, 'PUT', claim.url, NOW), { address: '203.0.113.9', https: true, bodySha256: sha });
  t.equal(signClient(key, { ...claim, body: Buffer.alloc(0) }, NOW).split(' ')[4], '-', 'an empty body: none');
});

t.test('a connection-bound receiver: no nonce memory, unsigned streamed bodies believed', async (t) => {
  const v = new ClientVerifier({ receiver: 'main', replayMemory: false, unsignedBodies: true });
  const value = signClient(key, { ...claim, receiver: 'main', method: 'PUT' }, NOW);
  const take = () => v.take(key, headersWith(value, { 'transfer-encoding': 'chunked' }), H, 'PUT', claim.url, NOW);
  t.same(take(), { address: '203.0.113.9', https: true });
  t.same(take(), { address: '203.0.113.9', https: true }, 'again: the connection, not a memory, stops replays there');
  t.equal(v.take(key, headersWith(value), H, 'PUT', claim.url, NOW + CLIENT_SIGNATURE_WINDOW_MS + 1), undefined, 'the window still holds');
  t.equal(v.take(key, headersWith(value), H, 'POST', claim.url, NOW), undefined, 'and the request line');
});

t.test('the nonce memory is bounded and forgets what its window ended', async (t) => {
  const v = new ClientVerifier({ receiver: 'b', maxNonces: 2, windowMs: 1000 });
  const take = (at: number) => v.take(key, headersWith(signClient(key, claim, at)), H, 'GET', claim.url, at);
  t.ok(take(NOW));
  t.ok(take(NOW));
  t.equal(take(NOW), undefined, 'full: refused rather than forgotten early');
  t.ok(take(NOW + 1001), 'the first ones expired: room again');
});
