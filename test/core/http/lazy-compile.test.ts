import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import type { SerializerCache } from '../../../core/http/serializer-cache.ts';
import { validatorsOf } from '../../../core/http/server.ts';
import { buildInfo, fromLog, loadBuildInfo } from '../../../core/http/build-info.ts';
import { stringsOnly } from '../../../core/http/lazy-validators.ts';
import { Type } from '@sinclair/typebox';

/*
 * Issue 29 (start-up): fastify compiled every route's response serializer and request validators
 * while the app booted, about a tenth of the start-up, for routes most runs never call. Each is
 * now compiled when its route first answers; what they answer is unchanged.
 */

t.test('no response serializer is compiled at start; a route compiles its own when it first answers', async (t) => {
  const app = await startApp(t);
  const cache = app.service.app.kernel.retained.get('core:serializers') as SerializerCache;
  t.equal(cache.size, 0, 'none while booting');
  const r = await app.request('GET', '/api/v3/config');
  t.equal(r.status, 200);
  t.type(r.body.config, 'object', 'the config is serialized by its schema');
  t.equal(cache.size, 1, 'the one route that answered');
  await app.request('GET', '/api/v3/config');
  t.equal(cache.size, 1, 'compiled once');
});

t.test('no request validator is compiled at start; a body is still checked against its schema', async (t) => {
  const app = await startApp(t);
  const validators = validatorsOf(app.service.app.kernel.http)!;
  t.ok(validators, 'the app has its lazy validators');
  t.equal(validators.compiled, 0, 'none while booting');
  const bad = await app.request('POST', '/api/v3/metrics', { body: { timerange_sec: 'soon' } });
  t.equal(bad.status, 400, 'a body against the schema is refused');
  const compiled = validators.compiled;
  t.ok(compiled >= 1, `compiled on first use (${compiled})`);
  const ok = await app.request('POST', '/api/v3/metrics', { body: { metrics: [{ name: 'mem_total' }] } });
  t.equal(ok.status, 200, 'a valid body passes');
  t.equal(validators.compiled, compiled, 'the route compiled its schema once');
});

t.test('the build identity is read in the background once; About carries it', async (t) => {
  const first = loadBuildInfo();
  t.equal(loadBuildInfo(), first, 'one read for the process');
  const info = await first;
  t.same(buildInfo(), info, 'the synchronous reader gets the same');
  const app = await startApp(t);
  const about = await app.request('GET', '/api');
  t.equal(about.body.version.repository_commit, info.commit);
  t.equal(about.body.version.build_date, info.date);
});

t.test('GET /api/v3/config: the same bytes until the config changes, then the new ones', async (t) => {
  const app = await startApp(t);
  const a = await app.request('GET', '/api/v3/config');
  const b = await app.request('GET', '/api/v3/config');
  t.equal(b.text, a.text, 'unchanged');
  const put = await app.request('PUT', '/api/v3/config', { body: { name: 'renamed' } });
  t.equal(put.status, 200);
  const c = await app.request('GET', '/api/v3/config');
  t.not(c.body.updated_at, a.body.updated_at, 'the stored time moved');
  const pretty = await app.request('GET', '/api/v3/config?pretty');
  t.same(JSON.parse(pretty.text), c.body, '?pretty still applies');
});

t.test('issue 46.4: a schema of plain strings is checked without ajv, exactly as ajv would', async (t) => {
  const q = stringsOnly(Type.Object({ a: Type.Optional(Type.String({ description: 'x' })), b: Type.String() }))!;
  t.type(q, 'function', 'an object of plain strings has a quick check');
  t.ok(q({ b: '1' }) && q({ a: '', b: '1', other: [1] }), 'strings, absent optionals and other members pass');
  t.notOk(q({ a: '1' }), 'a required member missing is ajv\'s to word');
  t.notOk(q({ a: ['1', '2'], b: '1' }) || q({ b: 1 }) || q(null) || q([]) || q('x'), 'a repeated key, a number, not an object');
  for (const s of [Type.Object({ a: Type.String({ minLength: 1 }) }), Type.Object({ a: Type.Integer() }), Type.Object({ a: Type.String() }, { additionalProperties: false }),
    Type.Object({ a: Type.String({ default: 'x' }) }), Type.String(), Type.Object({ a: Type.Object({}) })]) {
    t.equal(stringsOnly(s), undefined, `no quick check for ${JSON.stringify(s)}`);
  }
  const app = await startApp(t);
  const validators = validatorsOf(app.service.app.kernel.http)!;
  t.equal((await app.request('GET', '/api/v3/process?id=a')).status, 200);
  t.equal(validators.compiled, 0, 'a valid query compiled nothing');
  t.equal((await app.request('GET', '/api/v3/process?id=a&id=b')).status, 200, 'a repeated key: the query parser keeps one');
  t.equal(validators.compiled, 0, 'nor did that');
  const bad = await app.request('PUT', '/api/v3/process/p1/command', { body: { command: 5 } });
  t.equal(bad.status, 400, 'a body of plain strings that is not is refused');
  t.match(bad.body, { message: String, code: Number }, 'with an Error body');
  t.match(JSON.stringify(bad.body), /command must be string/, 'in ajv\'s words');
  t.equal(validators.compiled, 1, 'by the schema compiled then');
});

t.test('issue 46.4: the build identity from one run of git', async (t) => {
  t.same(fromLog('abc\n2026-01-01T00:00:00+00:00\nHEAD -> main, origin/main'), { commit: 'abc', date: '2026-01-01T00:00:00+00:00', branch: 'main' });
  t.same(fromLog('abc\n2026-01-01T00:00:00+00:00\nHEAD, tag: v1, main'), { commit: 'abc', date: '2026-01-01T00:00:00+00:00', branch: 'HEAD' }, 'detached: HEAD, as rev-parse --abbrev-ref says');
  t.same(fromLog(''), { commit: '', date: '', branch: '' }, 'no git: all empty');
});
