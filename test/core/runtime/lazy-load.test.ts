import * as nodeModule from 'node:module';
import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { gqlData } from '../../plugins/graphql/helpers.ts';

/*
 * Load only what runs (issue 29): a service started with the default plugins holds neither
 * mercurius nor graphql until the first query, nor acme-client without ACME; and a route's
 * validator and serializer are compiled when it is first called. This file is its own process
 * (tap runs each file alone), so the module cache shows exactly what the boot loaded.
 */
const cache = nodeModule.createRequire(import.meta.url).cache;
const loaded = (pkg: string) => Object.keys(cache).some((k) => k.includes(`/node_modules/${pkg}/`));
// ES modules (jose) are not in the require cache: every module resolved from here on is noted
const resolved: string[] = [];
// Node 24's synchronous hooks (the typings of this repository predate them)
type Resolve = (spec: string, ctx: unknown, next: (spec: string, ctx: unknown) => { url: string }) => { url: string };
(nodeModule as unknown as { registerHooks(h: { resolve: Resolve }): void }).registerHooks({
  resolve: (spec, ctx, next) => {
    const r = next(spec, ctx);
    resolved.push(r.url);
    return r;
  },
});
const imported = (pkg: string) => resolved.some((u) => u.includes(`/node_modules/${pkg}/`));

t.test('issue 46.4: the process list and a process by id need no validator compiler; jose waits for auth', async (t) => {
  const app = await startApp(t);
  // the ES facade of node:http loads undici (fetch, WebSocket) for nothing: core/runtime/builtin.ts
  t.notOk((process as unknown as { moduleLoadList: string[] }).moduleLoadList.some((m) => m.includes('undici')), 'no undici after boot');
  const list = await app.request('GET', '/api/v3/process?filter=state&reference=x&idpattern=a*');
  t.equal(list.status, 200, 'a list with a query answers');
  t.equal((await app.request('GET', '/api/v3/process/nope')).status, 404, 'a process by id answers');
  t.notOk(loaded('@fastify/ajv-compiler'), 'their query and :id are plain strings: no ajv loaded for them');
  t.notOk(imported('jose'), 'no jose with auth off (the auth plugin is set up all the same)');
  t.notOk(loaded('mime-types'), 'no mime-types before a static folder serves a file');
});

t.test('validators are compiled at a route\'s first request, not at boot', async (t) => {
  const app = await startApp(t);
  t.notOk(loaded('@fastify/ajv-compiler'), 'no validator compiler after boot');
  const r = await app.request('POST', '/api/v3/process', { body: { id: 7 } });
  t.equal(r.status, 400, 'a body that fails validation is refused');
  t.ok(loaded('@fastify/ajv-compiler'), 'compiled at the route\'s first request');
});

t.test('mercurius and graphql load at the first query; acme-client not at all without ACME', async (t) => {
  const app = await startApp(t);
  t.ok(await app.request('GET', '/api/v3/process').then((r) => r.status === 200), 'the API answers');
  t.notOk(loaded('mercurius'), 'no mercurius after boot');
  t.notOk(loaded('graphql'), 'no graphql after boot');
  t.notOk(loaded('acme-client'), 'no acme-client (tls.auto is off)');
  t.same(await gqlData(app, '{ ping }'), { ping: 'pong' });
  t.ok(loaded('mercurius'), 'mercurius once a query came');
  t.ok(loaded('graphql'), 'graphql once a query came');
});
