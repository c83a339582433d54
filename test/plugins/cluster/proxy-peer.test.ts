import t from 'tap';
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { ForwardInput } from '../../../sdk/index.ts';
import { CLIENT_HEADER, HOP_HEADER, PeerKey, SIGNATURE_WINDOW_MS } from '../../../plugins/cluster/peer.ts';
import { ClusterProxy, processIdOf } from '../../../plugins/cluster/proxy.ts';
import { namesProcess } from '../../../plugins/cluster/proxy-files.ts';

const req = (headers: Record<string, string>, method = 'GET', url = '/api/v3/process/x/state') =>
  ({ headers: { ...headers }, method, url }) as unknown as FastifyRequest;

const PATH = '/api/v3/process/x/state';

t.test('a signed client address is vouched for once, then stripped; anything else is ignored and stripped', async (t) => {
  const key = new PeerKey('b');
  key.use(Buffer.alloc(32, 7));
  const now = 1_800_000_000_000;
  const good = key.sign({ ip: '10.1.2.3', method: 'GET', url: PATH, node: 'b' }, now)!;
  const r = req({ [CLIENT_HEADER]: good });
  t.equal(key.take(r, now), '10.1.2.3', 'the signed address');
  t.notOk(CLIENT_HEADER in r.headers, 'stripped: no route sees it');

  const other = new PeerKey('b');
  other.use(Buffer.alloc(32, 8));
  const fresh = () => key.sign({ ip: '10.1.2.3', method: 'GET', url: PATH, node: 'b' }, now)!;
  const cases: [string, () => FastifyRequest, number][] = [
    ['another key', () => req({ [CLIENT_HEADER]: other.sign({ ip: '10.1.2.3', method: 'GET', url: PATH, node: 'b' }, now)! }), now],
    ['a forged signature', () => req({ [CLIENT_HEADER]: `127.0.0.1 ${now} ${'n'.repeat(16)} - ${'ab'.repeat(32)}` }), now],
    ['the address changed', () => req({ [CLIENT_HEADER]: fresh().replace('10.1.2.3', '127.0.0.1') }), now],
    ['another request line', () => req({ [CLIENT_HEADER]: fresh() }, 'DELETE'), now],
    ['another URL', () => req({ [CLIENT_HEADER]: fresh() }, 'GET', '/api/v3/process/y/state'), now],
    ['signed for another node', () => req({ [CLIENT_HEADER]: key.sign({ ip: '10.1.2.3', method: 'GET', url: PATH, node: 'c' }, now)! }), now],
    ['after the window', () => req({ [CLIENT_HEADER]: fresh() }), now + SIGNATURE_WINDOW_MS + 1],
    ['before the window', () => req({ [CLIENT_HEADER]: fresh() }), now - SIGNATURE_WINDOW_MS - 1],
    ['the old format (5 minutes, no nonce)', () => req({ [CLIENT_HEADER]: `10.1.2.3 ${now} ${'ab'.repeat(32)}` }), now],
    ['a replay of the header taken above', () => req({ [CLIENT_HEADER]: good }), now],
    ['a body the signature does not cover', () => req({ [CLIENT_HEADER]: fresh(), 'content-length': '7' }), now],
    ['a chunked body the signature does not cover', () => req({ [CLIENT_HEADER]: fresh(), 'transfer-encoding': 'chunked' }), now],
    ['garbage', () => req({ [CLIENT_HEADER]: 'nonsense' }), now],
  ];
  for (const [what, make, at] of cases) {
    const r2 = make();
    t.equal(key.take(r2, at), undefined, what);
    t.notOk(CLIENT_HEADER in r2.headers, `${what}: stripped`);
  }
  const noKey = new PeerKey('b');
  const r3 = req({ [CLIENT_HEADER]: fresh() });
  t.equal(noKey.take(r3, now), undefined, 'without the key nothing is vouched for');
  t.notOk(CLIENT_HEADER in r3.headers);
  t.equal(noKey.sign({ ip: '1.2.3.4', method: 'GET', url: '/', node: 'b' }), undefined, 'and nothing is signed');
  t.equal(key.take(req({}), now), undefined, 'no header: not ours');
});

t.test('a body is covered by its digest; each header is good once, within its window', async (t) => {
  const key = new PeerKey('b');
  key.use(Buffer.alloc(32, 9));
  const now = 1_800_000_000_000;
  const body = Buffer.from('{"note":"one"}');
  const signed = key.sign({ ip: '10.1.2.3', method: 'PUT', url: '/api/v3/process/x/metadata/note', node: 'b', body }, now)!;
  const put = () => req({ [CLIENT_HEADER]: signed, 'content-length': String(body.length) }, 'PUT', '/api/v3/process/x/metadata/note');
  t.same(key.take(put(), now + 1000), { address: '10.1.2.3', bodySha256: createHash('sha256').update(body).digest('hex') }, 'the address and the digest the core checks the body against');
  t.equal(key.take(put(), now + 2000), undefined, 'the same header again (another body or the same): a replay, refused');
  // nonces are forgotten once their window ended, when a replay fails on its time anyway
  const late = key.sign({ ip: '10.1.2.3', method: 'GET', url: PATH, node: 'b' }, now + SIGNATURE_WINDOW_MS * 3)!;
  t.equal(key.take(req({ [CLIENT_HEADER]: late }), now + SIGNATURE_WINDOW_MS * 3), '10.1.2.3');
});

t.test('the process id of a per-process API path, URL-decoded', async (t) => {
  t.equal(processIdOf('/api/v3/process/abc'), 'abc');
  t.equal(processIdOf('/api/v3/process/abc/state'), 'abc');
  t.equal(processIdOf('/api/v3/process/abc?x=1'), 'abc');
  t.equal(processIdOf('/api/v3/process/restreamer-ui%3Aingest%3A1%2Fx/metadata/k'), 'restreamer-ui:ingest:1/x');
  t.equal(processIdOf('/api/v3/process/a%20b?filter=state'), 'a b');
  t.equal(processIdOf('/api/v3/process/'), undefined);
  t.equal(processIdOf('/api/v3/process/?x'), undefined);
  t.equal(processIdOf('/api/v3/process/%zz/state'), undefined, 'malformed: handled locally');
});

t.test('a file path names a process by a name or folder that starts with its id', async (t) => {
  t.ok(namesProcess('/p1.m3u8', 'p1'));
  t.ok(namesProcess('/p1_003.ts', 'p1'));
  t.ok(namesProcess('/live/p1/index.m3u8', 'p1'));
  t.ok(namesProcess('/proxied 1.m3u8', 'proxied 1'));
  t.ok(namesProcess('/p1', 'p1'));
  t.notOk(namesProcess('/xp1.ts', 'p1'), 'inside another name');
  t.notOk(namesProcess('/p10.m3u8', 'p1'), 'a longer id');
  t.ok(namesProcess('/p10.m3u8', 'p10'));
});

t.test('before the cluster key is read: nothing is proxied, and a request another node passed on is refused (503)', async (t) => {
  const node = {
    id: 'a',
    view: () => ({
      node_id: 'a', leader: 'a', health: { nats: 'connected' as const, last_error: null },
      nodes: [{ id: 'b', api_address: 'http://127.0.0.1:1', capacity: { cpus: 1, max_processes: 0 }, load: { loadavg: 0, processes_running: 0 }, version: '', started_at: '' }],
      assignments: [{ process_id: 'x', node_id: 'b' }],
    }),
  };
  const proxy = new ClusterProxy(node, new PeerKey('a'), () => []);
  t.teardown(() => proxy.close());
  const input = (headers: Record<string, string>) => ({
    request: { headers, url: '/api/v3/process/x/state', method: 'GET' }, reply: {}, access: 'protected', api: true,
  }) as unknown as ForwardInput;
  t.equal(await proxy.forward(input({})), undefined, 'b\'s process is answered here until the key is known');
  const err = await proxy.forward(input({ [HOP_HEADER]: 'b' })).catch((e: unknown) => e);
  t.match(err, { status: 503, errorCode: 'CLUSTER_NOT_READY' }, 'refused: its client could not be judged');
});
