import t from 'tap';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { startApp } from '../../helpers/app.ts';

/*
 * The front door's hooks for a plugin that forwards requests between nodes (the cluster):
 * `peer` vouches for the original client's address, `forward` answers a request before its
 * handler, with the body unread, and only once the request may pass.
 */

const FIXTURE = fileURLToPath(new URL('./fixtures/forward-plugin.ts', import.meta.url));

t.test('peer: a vouched address is the client for the IP lists; an unvouched header is nothing', async (t) => {
  const app = await startApp(t, { config: { api: { access: { http: { block: ['10.0.0.0/8'] } } }, plugins: ['memfs', FIXTURE] } });
  t.same((await app.request('GET', '/test/seen', { headers: { 'x-test-peer': '192.0.2.7 ok' } })).body, { client: '192.0.2.7' });
  t.same((await app.request('GET', '/test/seen', { headers: { 'x-test-peer': '192.0.2.7 forged' } })).body, { client: '127.0.0.1' },
    'not vouched: the TCP peer counts');
  t.equal((await app.request('GET', '/api/v3/fs', { headers: { 'x-test-peer': '10.1.1.1 ok' } })).status, 403, 'a vouched blocked address is blocked');
  t.equal((await app.request('GET', '/api/v3/fs')).status, 200);
});

t.test('peer with a body digest: the handler runs only with the body the signature covers', async (t) => {
  const app = await startApp(t, { config: { plugins: ['memfs', FIXTURE] } });
  const body = '{"a":1}';
  const sha = createHash('sha256').update(body).digest('hex');
  const ok = await app.request('POST', '/test/echo', { raw: body, headers: { 'content-type': 'application/json', 'x-test-peer': `192.0.2.7 ok ${sha}` } });
  t.same(ok.body, { body: { a: 1 }, client: '192.0.2.7' }, 'the covered body: vouched, handled');
  const other = await app.request('POST', '/test/echo', { raw: '{"a":2}', headers: { 'content-type': 'application/json', 'x-test-peer': `192.0.2.7 ok ${sha}` } });
  t.equal(other.status, 403, 'another body: refused before the handler');
  t.match(other.body, { code: 403, details: [/not the one its signed peer header covers/] });
});

t.test('forward: answers before the handler with the body unread, after the checks', async (t) => {
  const app = await startApp(t, { config: { api: { read_only: true, access: { http: { block: ['10.0.0.0/8'] } } }, plugins: ['memfs', FIXTURE] } });
  const put = await app.request('PUT', '/fwd/x', { raw: 'hello' });
  t.equal(put.status, 207, 'the tap answered, not the route');
  t.match(put.body, { forwarded: '/fwd/x', access: 'public', api: false, body: 'hello' }, 'with the raw body');
  t.equal((await app.request('GET', '/api/v3/fwd/y', { headers: { 'x-test-peer': '10.1.1.1 ok' } })).status, 403,
    'an API request is checked first (IP lists)');
  t.equal((await app.request('PUT', '/api/v3/fwd/z', { body: { a: 1 } })).status, 403, 'and read-only');
  const get = await app.request('GET', '/api/v3/fwd/y', { headers: { 'x-test-peer': '192.0.2.9 ok' } });
  t.match(get.body, { forwarded: '/api/v3/fwd/y', access: 'protected', api: true, client: '192.0.2.9' }, 'then forwarded, knowing the client');
  t.equal((await app.request('GET', '/memfs/none')).status, 404, 'other requests are the routes\' business');
});
