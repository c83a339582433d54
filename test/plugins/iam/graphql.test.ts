import t from 'tap';
import { fileURLToPath } from 'node:url';
import { request, startApp } from '../../helpers/app.ts';
import { gql } from '../graphql/helpers.ts';

/*
 * Issue 49.2, GraphQL answers only what the caller may read: an IAM user gets from each field
 * what its REST twin would give it (the list filtered by its `process` policies, one process and
 * its probe by `GET /api/v3/process/<id>`, `log` and `metrics` by their routes, a vendor's field
 * by `POST /api/graph/query/<field>`), with the REST status in the error; an answer the
 * superuser's query left in the cache is never handed to a user; the superuser sees all.
 */

const JWT = 'iam-graphql-jwt-secret-0123456789abcdef';
const API = { auth: { enable: true, username: 'admin', password: 'admin-pw', jwt: { secret: JWT } } };
const vendor = fileURLToPath(new URL('../graphql/fixtures/vendor-hello.ts', import.meta.url));
const proc = (id: string, domain?: string) => ({
  id, ...(domain ? { domain } : {}), autostart: false,
  input: [{ id: 'in', address: 'testsrc2=size=160x120:rate=10', options: ['-f', 'lavfi'] }],
  output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
});
const viewer = (extra: object[] = []) => ({
  name: 'viewer', auth: { api: { userpass: { enable: true, password: 'viewer password' } } },
  policies: [
    { types: ['api'], resource: '/api/graph/query', actions: ['POST'] },
    { types: ['api'], resource: '/api/v3/process', actions: ['GET'] },
    { types: ['api'], resource: '/api/v3/process/cam-*', actions: ['GET'] },
    { types: ['process'], resource: 'cam-*', actions: ['read'] },
    { domain: 'tv', types: ['process'], resource: 'news', actions: ['read'] },
    ...extra,
  ],
});

t.test('an IAM user\'s GraphQL answers hold what its policies let it read', async (t) => {
  const app = await startApp(t, { config: { api: API, iam: { enable: true }, plugins: ['*', { module: vendor }] } });
  const login = async (u: string, p: string) => (await request(app.url, 'POST', '/api/login', { body: { username: u, password: p } })).body.access_token as string;
  const admin = await login('admin', 'admin-pw');
  for (const b of [proc('cam-1'), proc('cam-2'), proc('other-1'), proc('news', 'tv')]) {
    t.equal((await app.request('POST', '/api/v3/process', { body: b, token: admin })).status, 200);
  }
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: viewer(), token: admin })).status, 200);
  const token = await login('viewer', 'viewer password');
  const ids = (r: { body: { data: { processes: { id: string }[] } } }) => r.body.data.processes.map((p) => p.id).sort();

  // the superuser's answer is cached first: the user must not get it
  const all = '{ processes { id } }';
  t.same(ids(await gql(app, all, undefined, admin)), ['cam-1', 'cam-2', 'news', 'other-1']);
  t.same(ids(await gql(app, all, undefined, admin)), ['cam-1', 'cam-2', 'news', 'other-1'], 'the superuser sees all (twice: kept)');
  const mine = await gql(app, all, undefined, token);
  t.equal(mine.status, 200, mine.text);
  t.same(ids(mine), ['cam-1', 'cam-2', 'news'], 'the user sees what its process policies let it read, in their domains');
  t.same(ids(await gql(app, all, undefined, admin)), ['cam-1', 'cam-2', 'news', 'other-1'], 'and its answer is not kept for the superuser');

  const one = await gql(app, '{ process(id: "cam-1") { id } other: process(id: "other-1") { id } }', undefined, token);
  t.same(one.body.data, { process: { id: 'cam-1' }, other: null }, 'one process it may read, null for one it may not');
  t.match(one.body.errors, [{ path: ['other'], extensions: { code: 403, error: 'IAM_FORBIDDEN' } }], 'with the REST twin\'s 403');
  const probe = await gql(app, '{ probe(id: "other-1") { log } }', undefined, token);
  t.match(probe.body.errors, [{ extensions: { code: 403 } }], 'no probe of a process it may not read');

  t.equal((await gql(app, '{ about { id } }', undefined, token)).body.data.about.id.length > 0, true, 'about answers everyone who may query');
  // non-null fields: a refused one nulls the answer (GraphQL's rule), so each is asked alone
  for (const q of ['{ log }', '{ metrics(query: { metrics: [{ name: "cpu_idle" }] }) { metrics { name } } }', '{ vendorHello }']) {
    const r = await gql(app, q, undefined, token);
    t.match(r.body, { errors: [{ extensions: { code: 403, error: 'IAM_FORBIDDEN' } }] }, `${q}: no policy for its twin`);
    t.notOk(Object.values(r.body.data ?? {}).some((v) => v !== null), 'and no value');
  }

  // the operator grants them by their twins' paths
  const grant = viewer([
    { types: ['api'], resource: '/api/v3/log', actions: ['GET'] },
    { types: ['api'], resource: '/api/graph/query/vendorHello', actions: ['POST'] },
  ]);
  t.equal((await app.request('PUT', '/api/v3/iam/user/viewer/policy', { body: grant.policies, token: admin })).status, 200);
  const app2 = await gql(app, '{ log vendorHello }', undefined, token);
  t.notOk(app2.body.errors, app2.text);
  t.equal(app2.body.data.vendorHello, 'hello from a vendor');

  t.equal((await app.request('PUT', '/api/v3/iam/user/viewer/policy', { body: viewer().policies.slice(1), token: admin })).status, 200);
  t.equal((await gql(app, all, undefined, token)).status, 403, 'without the api policy for /api/graph/query the route refuses');
});
