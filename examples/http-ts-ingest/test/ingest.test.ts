import t from 'tap';
import { definePlugin, ingestHooksRef, placeholdersRef } from '@media-core/sdk';
import { metricCollectorsRef } from '@media-core/plugins/metrics/api';
import { publisher, startIngest, until } from './helpers.ts';

const live = async (kit: Awaited<ReturnType<typeof startIngest>>) => (await kit.request('GET', '/api/v3/httpts')).body as any[];

t.test('loaded by package name: publish, read through the placeholder URL, hooks, sessions, metrics', async (t) => {
  const kit = await startIngest(t);
  t.ok(kit.app.kernel.plugins.includes('http-ts-ingest'));

  const url = kit.services.get(placeholdersRef).get('httpts')!.value('input');
  t.match(url, /^http:\/\/[^/]+:\d+\/ingest\/ts\/\{name\}\?key=[0-9a-f]{24}$/, 'the placeholder hands out the read URL with its key');
  const readPath = url.replace(/^http:\/\/[^/]+/, '').replace('{name}', 'cam');

  const pub = publisher(kit, '/ingest/ts/cam');
  pub.body.write(Buffer.alloc(188, 1));
  const [stream] = await until('the stream to be live', async () => (await live(kit)).length === 1 && live(kit));
  t.match(stream, { name: 'cam', readers: 0 });

  const reading = kit.request('GET', readPath);
  await until('the reader to attach', async () => (await live(kit))[0]?.readers === 1);
  const metrics = kit.services.get(metricCollectorsRef).flatMap((c) => c.collect());
  t.same(metrics.filter((m) => m.name.startsWith('httpts_')).map((m) => [m.name, m.value]),
    [['httpts_streams', 1], ['httpts_rx_bytes', 188], ['httpts_readers', 1]], 'figures for the metrics plugin');
  const sessions = (await kit.request('GET', '/api/v3/session/active?collectors=httpts')).body.httpts;
  t.same(sessions.map((s: any) => s.reference).sort(), ['cam', 'cam'], 'publisher and reader are sessions of collector httpts');

  pub.body.write(Buffer.alloc(188 * 2, 2));
  pub.body.end(Buffer.alloc(188, 3));
  const done = await pub.done;
  t.same([done.status, done.body], [200, { name: 'cam', bytes: 188 * 4 }], 'the publisher is answered when its body ends');
  const read = await reading;
  t.equal(read.status, 200);
  t.equal(read.headers.get('content-type'), 'video/mp2t');
  t.same(Buffer.from(read.text, 'latin1').length, 188 * 3, 'the reader gets everything after it joined, and ends with the stream');
  t.same(await live(kit), []);
  const summary = (await kit.request('GET', '/api/v3/session?collectors=httpts')).body.httpts.summary;
  t.equal(summary.sessions, 2, 'both sessions went to the history');
});

t.test('refusals: token rule, busy name, stream limit, key, name, not live', async (t) => {
  const kit = await startIngest(t, { token: 's3cret', max_streams: 1 });
  const noToken = await kit.request('PUT', '/ingest/ts/a', { raw: 'x' });
  t.same([noToken.status, noToken.body], [401, { code: 401, message: 'invalid or missing token', details: ['invalid or missing token'] }], 'prePublish rule');

  const first = publisher(kit, '/ingest/ts/a?token=s3cret');
  first.body.write('x');
  await until('a to be live', async () => (await live(kit)).length === 1);
  t.equal((await kit.request('PUT', '/ingest/ts/a?token=s3cret', { raw: 'y' })).status, 409, 'one publisher per name');
  t.equal((await kit.request('PUT', '/ingest/ts/b?token=s3cret', { raw: 'y' })).status, 503, 'max_streams');
  t.equal((await kit.request('GET', '/ingest/ts/a?key=wrong')).status, 403, 'reads need the placeholder key');
  const key = /key=(\w+)/.exec(kit.services.get(placeholdersRef).get('httpts')!.value('input'))![1];
  t.equal((await kit.request('GET', `/ingest/ts/nobody?key=${key}`)).status, 404, 'not live');
  t.equal((await kit.request('PUT', '/ingest/ts/bad%20name?token=s3cret', { raw: 'y' })).status, 400, 'names setting');
  first.body.end();
  t.equal((await first.done).status, 200);
});

t.test('another plugin\'s prePublish veto applies to this protocol too', async (t) => {
  const policy = definePlugin({
    name: 'policy',
    setup(ctx) {
      ctx.hooks.tap(ingestHooksRef, 'prePublish', async (peer) => (peer.stream.startsWith('private') ? { reason: 'private', kind: 'forbidden' as const } : undefined));
    },
  });
  const kit = await startIngest(t, {}, [policy]);
  const r = await kit.request('PUT', '/ingest/ts/private-1', { raw: 'x' });
  t.same([r.status, r.body.details], [403, ['private']]);
  t.equal((await kit.request('PUT', '/ingest/ts/public-1', { raw: 'x' })).status, 200);
});

t.test('its config section is validated with the rest of the configuration', async (t) => {
  await t.rejects(startIngest(t, { names: '([', path: '/api/ingest', max_streams: 0 }),
    /plugins\[2\]\.config\.max_streams/);
  await t.rejects(startIngest(t, { names: '([' }), /plugins\[2\]\.config\.names: not a regular expression/);
  await t.rejects(startIngest(t, { path: '/api/ingest' }), /plugins\[2\]\.config\.path: must not be under \/api/);
});

t.test('a GraphQL field lists the live streams, as the REST route does', async (t) => {
  const kit = await startIngest(t, {}, ['graphql']);
  const pub = publisher(kit, '/ingest/ts/gq');
  pub.body.write(Buffer.alloc(188));
  await until('gq to be live', async () => (await live(kit)).length === 1);
  const r = await kit.request('POST', '/api/graph/query', { body: { query: '{ httptsStreams { name bytes_rx readers remote } }' } });
  t.equal(r.status, 200, r.text);
  t.same(r.body.data.httptsStreams, [{ name: 'gq', bytes_rx: 188, readers: 0, remote: (await live(kit))[0].remote }]);
  pub.body.end();
  await pub.done;
  t.same((await kit.request('POST', '/api/graph/query', { body: { query: '{ httptsStreams { name } }' } })).body.data.httptsStreams, []);
});

t.test('a publisher that breaks off ends its stream and its readers', async (t) => {
  const kit = await startIngest(t);
  const key = /key=(\w+)/.exec(kit.services.get(placeholdersRef).get('httpts')!.value('input'))![1];
  const pub = publisher(kit, '/ingest/ts/cut');
  pub.body.write(Buffer.alloc(188));
  await until('cut to be live', async () => (await live(kit)).length === 1);
  const reading = kit.request('GET', `/ingest/ts/cut?key=${key}`);
  await until('the reader to attach', async () => (await live(kit))[0]?.readers === 1);
  pub.body.destroy(new Error('connection reset'));
  await pub.done.catch(() => undefined);
  t.equal((await reading).status, 200, 'the reader\'s response ends');
  await until('the stream to be gone', async () => (await live(kit)).length === 0);
  const summary = (await kit.request('GET', '/api/v3/session?collectors=httpts')).body.httpts.summary;
  t.equal(summary.sessions, 2, 'publisher and reader sessions closed');
});
