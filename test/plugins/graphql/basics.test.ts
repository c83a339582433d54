import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { gql, gqlData } from './helpers.ts';

t.test('ping, mutation ping, about and log answer as GET /ping, /api and /api/v3/log', async (t) => {
  const app = await startApp(t);
  t.same(await gqlData(app, '{ ping }'), { ping: 'pong' });
  t.same(await gqlData(app, 'mutation { ping }'), { ping: 'pong' });

  const rest = (await app.request('GET', '/api')).body;
  const { about } = await gqlData(app, '{ about { app id name created_at uptime_seconds version { number repository_commit repository_branch build_date arch compiler } } }');
  const { auths: _auths, uptime_seconds: restUptime, ...restRest } = rest;
  const { uptime_seconds: uptime, ...aboutRest } = about;
  t.same(aboutRest, restRest, 'the same About, without auths');
  t.ok(Math.abs(uptime - restUptime) <= 1, 'uptime within a second');

  const restLog = (await app.request('GET', '/api/v3/log')).body as string[];
  const { log } = await gqlData(app, '{ log }');
  t.ok(log.length > 0, 'log lines');
  t.same(log.slice(0, restLog.length - 5), restLog.slice(0, restLog.length - 5), 'the same console lines');
});

t.test('a bad query is 400 with errors; unknown body fields are ignored; only POST runs queries', async (t) => {
  const app = await startApp(t);
  const syntax = await gql(app, '{ ping ');
  t.equal(syntax.status, 400);
  t.equal(syntax.body.data, null);
  t.match(syntax.body.errors[0].message, /Syntax Error/);

  const unknown = await gql(app, '{ nope }');
  t.equal(unknown.status, 400);
  t.match(unknown.body.errors[0].message, /Cannot query field "nope"/);

  const extra = await app.request('POST', '/api/graph/query', { body: { query: '{ ping }', extensions: {}, foo: 1 } });
  t.same([extra.status, extra.body], [200, { data: { ping: 'pong' } }]);

  const noQuery = await app.request('POST', '/api/graph/query', { body: { variables: {} } });
  t.equal(noQuery.status, 400);
  t.match(noQuery.body, { data: null, errors: [{ message: 'no query' }] });
  const notJson = await app.request('POST', '/api/graph/query', { body: { query: 5 } });
  t.match([notJson.status, notJson.body], [400, { data: null, errors: [{ message: /invalid GraphQuery/ }] }], 'a body that is no GraphQuery');

  const undecodable = await app.request('POST', '/api/graph/query', { raw: '{"query": ', headers: { 'content-type': 'application/json' } });
  t.equal(undecodable.status, 400);
  t.equal(undecodable.body.code, 400, 'the Error body');

  const big = await app.request('POST', '/api/graph/query', { body: { query: `{ ping }${' '.repeat(300 * 1024)}` } });
  t.equal(big.status, 413, 'the body limit');

  const get = await app.request('GET', '/api/graph/query?query=%7Bping%7D');
  t.not(get.status, 200, 'no GET queries');

  const badVars = await gql(app, 'query ($id: ID!) { process(id: $id) { id } }', {});
  t.equal(badVars.status, 400, 'a missing required variable is refused before running');
});

t.test('depth and cost limits refuse hostile queries with a clear error', async (t) => {
  const app = await startApp(t);
  const deep = await gql(app, '{ processes { state { progress { input { avstream { input { state } } } } } } }');
  t.equal(deep.status, 200, 'the deepest real path passes');
  const viaFragment = await gql(app, '{ processes { state { ...P } } } fragment P on ProcessState { progress { input { avstream { input { state } } } } }');
  t.equal(viaFragment.status, 200, 'seven levels through a fragment pass');
  // the schema has no path this deep (a vendor's recursive type could): the limit speaks all the same
  const eleven = '{ a: processes { id } b: process(id: "x") { state { progress { input { avstream { input { state { x { y { z { w } } } } } } } } } } }';
  const refused = await gql(app, eleven);
  t.equal(refused.status, 400);
  t.match(refused.body.errors.find((e: any) => e.extensions?.error === 'GRAPHQL_TOO_DEEP'), { message: /nested 11 levels deep; at most 10/ });
  const hostile = await gql(app, '{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }');
  t.equal(hostile.status, 400);
  t.match(hostile.body.errors[0], { message: /introspection passes through 4 nested lists/, extensions: { error: 'GRAPHQL_TOO_DEEP' } });

  const aliases = Array.from({ length: 1100 }, (_, i) => `a${i}: ping`).join(' ');
  const wide = await gql(app, `{ ${aliases} }`);
  t.equal(wide.status, 400);
  t.match(wide.body.errors[0], { message: /selects 1100 fields/, extensions: { error: 'GRAPHQL_TOO_COMPLEX' } });

  // one alias of log answers the whole log: 999 of them were 224 MB in 9 s, the service held
  const logs = await gql(app, `{ ${Array.from({ length: 9 }, (_, i) => `l${i}: log`).join(' ')} }`);
  t.equal(logs.status, 400);
  t.match(logs.body.errors[0], { message: /asks 9 times for log, processes, metrics or probe/, extensions: { error: 'GRAPHQL_TOO_COMPLEX' } });
  const spread = await gql(app, `query { ...L ...L ...M } fragment L on Query { a: log b: log c: processes { id } } fragment M on Query { ... on Query { d: log e: log f: log } }`);
  t.equal(spread.status, 400, 'fragments and inline fragments counted');
  t.match(spread.body.errors[0], { message: /asks 9 times/ });
  const eight = await gql(app, `{ ${Array.from({ length: 8 }, (_, i) => `l${i}: log`).join(' ')} }`);
  t.equal(eight.status, 200, 'eight are fine');
  t.equal(Object.keys(eight.body.data).length, 8);
});

t.test('the standard introspection query passes', async (t) => {
  const { getIntrospectionQuery } = await import('graphql');
  const app = await startApp(t);
  const r = await gql(app, getIntrospectionQuery());
  t.equal(r.status, 200);
  const types = (r.body.data.__schema.types as { name: string }[]).map((x) => x.name);
  for (const name of ['Process', 'Metrics', 'RawAVstream', 'About', 'Uint64', 'Time']) t.ok(types.includes(name), name);
});

t.test('the playground page loads', async (t) => {
  const app = await startApp(t);
  const r = await app.request('GET', '/api/graph');
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), /text\/html/);
  t.match(r.text, /<title>GraphQL<\/title>/);
  t.match(r.text, /\/api\/graph\/query/);
});

t.test('automatic persisted queries: unknown hash, then registered with the query, then by hash alone', async (t) => {
  const { createHash } = await import('node:crypto');
  const app = await startApp(t);
  const query = '{ ping }';
  const ext = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });
  const hash = createHash('sha256').update(query).digest('hex');
  const unknown = await app.request('POST', '/api/graph/query', { body: { extensions: ext(hash) } });
  t.match([unknown.status, unknown.body], [200, { data: null, errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] }]);
  const bad = await app.request('POST', '/api/graph/query', { body: { query, extensions: ext('0'.repeat(64)) } });
  t.equal(bad.status, 400, 'a hash that does not match');
  const register = await app.request('POST', '/api/graph/query', { body: { query, extensions: ext(hash) } });
  t.same(register.body, { data: { ping: 'pong' } });
  const byHash = await app.request('POST', '/api/graph/query', { body: { extensions: ext(hash) } });
  t.same([byHash.status, byHash.body], [200, { data: { ping: 'pong' } }]);
});
