import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestApp, type TestApp } from '../../../testkit/index.ts';
import { waitFor } from '../../helpers/wait.ts';
import { natsMissing, openBucket, startNatsCluster } from './nats.ts';

const missing = natsMissing();

/*
 * Issue 49.1, "users shared in the cluster": two in-process nodes on one real nats-server, each
 * with auth, iam and cluster. A user made on one node logs in on the other (its hashed password
 * travelled, never the password); changes, renames and deletes on either reach both; a name made
 * on both at once is stored once (the second a 409 or 400); a node's users.json from before the
 * cluster is imported once; a user deleted while a node was away is dropped there when it comes
 * back, never resurrected from its old users.json.
 */
const API = { auth: { enable: true, username: 'admin', password: 'admin-pw', jwt: { secret: 'cluster-iam-jwt-secret-0123456789abcdef' } } };
const user = (name: string, password = `${name} password`) => ({
  name, auth: { api: { userpass: { enable: true, password } } },
  policies: [{ types: ['api'], resource: '/api/v3/process', actions: ['GET'] }],
});

t.test('IAM users are shared by every node through core_users', { skip: missing ?? false }, async (t) => {
  const nats = await startNatsCluster(1);
  t.teardown(() => nats.stop());
  const dir = await mkdtemp(join(tmpdir(), 'cluster-iam-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const dbA = join(dir, 'a-db');
  const cluster = (id: string) => ({ name: 'cluster', config: { servers: [nats.servers[0]!.url], node_id: id, ttl_sec: 3, announce_sec: 1 } });
  const node = async (id: string, db?: string): Promise<TestApp> => {
    const kit = await createTestApp({ t, plugins: ['auth', 'iam', cluster(id)], config: { api: API, iam: { enable: true }, ...(db ? { db: { dir: db } } : {}) } });
    await kit.listen();
    return kit;
  };
  const login = (kit: TestApp, username: string, password: string) => kit.request('POST', '/api/login', { body: { username, password } });
  const admin = async (kit: TestApp) => (await login(kit, 'admin', 'admin-pw')).body.access_token as string;
  const names = async (kit: TestApp) => ((await kit.request('GET', '/api/v3/iam/user', { token: await admin(kit) })).body as { name: string }[]).map((u) => u.name).sort();
  const { kv } = await openBucket(t, nats.servers[0]!.url, 'users');

  // a single node with a user in its users.json switches into the cluster
  const single = await createTestApp({ t, plugins: ['auth', 'iam'], config: { api: API, iam: { enable: true }, db: { dir: dbA } } });
  t.equal((await single.request('POST', '/api/v3/iam/user', { body: user('early'), token: await admin(single) })).status, 200);
  await single.close();
  let a = await node('a', dbA);
  const b = await node('b');
  await waitFor(async () => (await names(b)).includes('early'), { timeout: 20_000, what: 'b listing the user of a\'s users.json' });
  t.equal((await login(b, 'early', 'early password')).status, 200, 'the imported user logs in on b');
  const keys: string[] = [];
  for await (const k of await kv.keys()) keys.push(k);
  t.ok(keys.some((k) => k.startsWith('import.')), 'a\'s import marker is in core_users');
  const stored = await kv.get(keys.find((k) => k.startsWith('u.') && Buffer.from(k.slice(2), 'base64url').toString() === 'early')!);
  t.notOk(stored!.string().includes('early password'), 'core_users holds the password hashed only');

  // made on b, logs in on a; a policy change on a reaches b's decisions
  const tokenB = await admin(b);
  t.equal((await b.request('POST', '/api/v3/iam/user', { body: user('carol'), token: tokenB })).status, 200);
  await waitFor(async () => (await login(a, 'carol', 'carol password')).status === 200, { timeout: 20_000, what: 'carol logging in on a' });
  const carolOnB = (await login(b, 'carol', 'carol password')).body.access_token as string;
  t.equal((await b.request('GET', '/api/v3/process', { token: carolOnB })).status, 200, 'her policy allows the list on b');
  t.equal((await a.request('PUT', '/api/v3/iam/user/carol/policy', { body: [{ types: ['api'], resource: '/api/v3/config', actions: ['GET'] }], token: await admin(a) })).status, 200);
  await waitFor(async () => (await b.request('GET', '/api/v3/process', { token: carolOnB })).status === 403, { timeout: 20_000, what: 'b deciding with the policy set on a' });
  t.equal((await b.request('GET', '/api/v3/config', { token: carolOnB })).status, 200, 'and allowing what it allows');

  // a name made on both nodes at once is stored once
  const [r1, r2] = await Promise.all([a.request('POST', '/api/v3/iam/user', { body: user('twin', 'twin of a'), token: await admin(a) }), b.request('POST', '/api/v3/iam/user', { body: user('twin', 'twin of b'), token: tokenB })]);
  t.ok([r1.status, r2.status].includes(200) && [r1.status, r2.status].some((s) => s === 409 || s === 400), `one 200, one refused (${r1.status}, ${r2.status})`);
  const winner = r1.status === 200 ? 'twin of a' : 'twin of b';
  await waitFor(async () => (await login(a, 'twin', winner)).status === 200 && (await login(b, 'twin', winner)).status === 200, { timeout: 20_000, what: 'both nodes holding the winner' });
  t.equal((await login(b, 'twin', winner === 'twin of a' ? 'twin of b' : 'twin of a')).status, 401, 'the loser\'s password opens nothing');

  // a rename on a, a delete on b
  t.equal((await a.request('PUT', '/api/v3/iam/user/carol', { body: { name: 'caroline' }, token: await admin(a) })).status, 200);
  await waitFor(async () => (await names(b)).includes('caroline') && !(await names(b)).includes('carol'), { timeout: 20_000, what: 'b following the rename' });
  t.equal((await b.request('DELETE', '/api/v3/iam/user/twin', { token: tokenB })).status, 200);
  await waitFor(async () => !(await names(a)).includes('twin'), { timeout: 20_000, what: 'a dropping the user b deleted' });
  t.equal((await login(a, 'twin', winner)).status, 401, 'a deleted user logs in nowhere');

  // a leaves; b deletes a user a has; a comes back with its old users.json
  await a.close();
  t.equal((await b.request('DELETE', '/api/v3/iam/user/early', { token: tokenB })).status, 200);
  a = await node('a', dbA);
  await waitFor(async () => !(await names(a)).includes('early') && (await names(a)).includes('caroline'), { timeout: 20_000, what: 'a dropping what was deleted while it was away' });
  t.same(await names(a), await names(b), 'both nodes list the same users');
  t.equal(await kv.get(keys.find((k) => k.startsWith('u.') && Buffer.from(k.slice(2), 'base64url').toString() === 'early')!).then((e) => e?.operation ?? 'none'), 'DEL', 'not imported again');
});
