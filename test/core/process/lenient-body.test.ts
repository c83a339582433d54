import t from 'tap';
import { lenient } from '../../../core/http/lenient-body.ts';
import { ProcessConfig } from '../../../core/process/schema.ts';
import { startApp } from '../../helpers/app.ts';
import { rawRequest } from '../../plugins/memfs/fs-helpers.ts';
import { nullProcess, VIDEO_IN } from './helpers.ts';

/** The headers the Python client (httpx) sends on every request. */
const PY = { 'content-type': 'application/json', accept: '*/*', 'accept-encoding': 'gzip, deflate', 'user-agent': 'python-httpx/0.27.0' };
const send = (url: string, method: string, path: string, body?: string, headers: Record<string, string> = PY) =>
  rawRequest(url, method, path, { headers: { ...headers, 'content-length': String(Buffer.byteLength(body ?? '')) }, body });

t.test('null for lists and objects decodes as Go does (the Python client sends these)', async (t) => {
  const app = await startApp(t);
  // byte for byte what the Python client's model dump looks like: every unset field is null
  const body = '{"id":"py","type":"ffmpeg","reference":null,"input":[{"id":"in","address":"testsrc2=size=160x120:rate=10",'
    + '"options":["-f","lavfi"],"cleanup":null}],"output":[{"id":"out","address":"-","options":["-f","null"],"cleanup":null}],'
    + '"options":null,"reconnect":true,"reconnect_delay_seconds":10,"autostart":false,"stale_timeout_seconds":null,"limits":null,'
    + '"unknown_field":{"x":1}}';
  const r = await send(app.url, 'POST', '/api/v3/process', body);
  t.equal(r.status, 200, r.text);
  const c = r.json as any;
  t.same(c.options, []);
  t.same(c.limits, { cpu_usage: 0, memory_mbytes: 0, waitfor_seconds: 0 });
  t.equal(c.reference, '');
  t.equal(c.stale_timeout_seconds, 0);
  t.notOk('unknown_field' in c, 'unknown fields are ignored');
  t.notOk('cleanup' in c.output[0], 'a null cleanup is no cleanup');

  // nulls on the POST keep the defaults that are set before decoding: new id, type, autostart
  const d = await send(app.url, 'POST', '/api/v3/process', JSON.stringify({ id: null, type: null, autostart: null,
    input: [{ id: null, address: VIDEO_IN.address, options: [...VIDEO_IN.options, null] }], output: [{ address: '-', options: ['-f', 'null'], cleanup: [{ pattern: 'x/*', max_files: null }] }], limits: { cpu_usage: null, memory_mbytes: 64 } }),
  { ...PY, 'content-type': 'application/json; charset=utf-8' });
  t.equal(d.status, 200, d.text);
  const dc = d.json as any;
  t.match(dc.id, /^.{22}$/);
  t.equal(dc.type, 'encoder');
  t.equal(dc.autostart, true);
  t.match(dc.input[0].id, /^.{22}$/);
  t.same(dc.input[0].options, [...VIDEO_IN.options, ''], 'a null list item is its zero value');
  t.same(dc.output[0].cleanup, [{ pattern: 'x/*', max_files: 0, max_file_age_seconds: 0, purge_on_delete: false }]);
  t.same(dc.limits, { cpu_usage: 0, memory_mbytes: 64, waitfor_seconds: 0 }, 'limits with only some keys');
  await app.request('DELETE', `/api/v3/process/${dc.id}`);

  // keys match case-insensitively, as in encoding/json
  const ci = await send(app.url, 'POST', '/api/v3/process', JSON.stringify({ ID: 'ci', Input: [VIDEO_IN], OUTPUT: [{ Address: '-', options: ['-f', 'null'] }], autostart: false }));
  t.equal(ci.status, 200, ci.text);
  t.equal((ci.json as any).output[0].address, '-');
});

t.test('PUT decodes onto the current config: no id, no input/output, null limits keep their value', async (t) => {
  const app = await startApp(t);
  t.equal((await app.request('POST', '/api/v3/process', { body: nullProcess('p', { limits: { cpu_usage: 10 }, options: ['-loglevel', 'info'] }) })).status, 200);
  const r = await send(app.url, 'PUT', '/api/v3/process/p', '{"reference":"r1","limits":null,"options":null,"extra":true}');
  t.equal(r.status, 200, r.text);
  const c = r.json as any;
  t.equal(c.id, 'p');
  t.equal(c.reference, 'r1');
  t.equal(c.limits.cpu_usage, 10, 'null struct: unchanged');
  t.same(c.options, [], 'null list: emptied');
  t.equal(c.input[0].address, VIDEO_IN.address, 'absent input keeps its value');
});

t.test('malformed bodies are still refused with the Error shape', async (t) => {
  const app = await startApp(t);
  const bad = async (body: string, what: string, headers = PY) => {
    const r = await send(app.url, 'POST', '/api/v3/process', body, headers);
    t.equal(r.status, 400, what);
    t.match(r.json, { code: 400, message: String, details: Array }, `${what}: Error shape`);
    return r.json as any;
  };
  const ok = { input: [VIDEO_IN], output: [{ address: '-', options: ['-f', 'null'] }], autostart: false };
  await bad(JSON.stringify({ ...ok, options: 'x' }), 'options as a string');
  await bad(JSON.stringify({ ...ok, reconnect_delay_seconds: '5' }), 'a number as a string');
  await bad(JSON.stringify({ ...ok, reconnect_delay_seconds: 1.5 }), 'a fraction for an integer');
  await bad(JSON.stringify({ ...ok, limits: [] }), 'limits as a list');
  t.equal((await bad(JSON.stringify({ ...ok, type: 'foo' }), 'unknown process type')).message, 'Unsupported process type');
  t.equal((await bad(JSON.stringify({ ...ok, input: null }), 'null for the required input')).message, 'Invalid JSON');
  await bad('{"input":[', 'invalid JSON');
  t.same((await bad(JSON.stringify(ok), 'text/plain', { ...PY, 'content-type': 'text/plain' })).details, ["request doesn't contain JSON content"]);
  t.same((await bad('', 'empty body')).details, ["request doesn't contain any content"]);
});

t.test('DELETE and metadata with the Python client headers', async (t) => {
  const app = await startApp(t);
  t.equal((await app.request('POST', '/api/v3/process', { body: nullProcess('d') })).status, 200);
  const md = await send(app.url, 'PUT', '/api/v3/process/d/metadata/k', '{"a":[1,null]}');
  t.equal(md.status, 200, md.text);
  t.same(md.json, { a: [1, null] }, 'metadata values are kept as sent, nulls inside included');
  t.equal((await send(app.url, 'PUT', '/api/v3/process/d/metadata/k', '', { ...PY, 'content-type': 'text/plain' })).status, 400);
  const none = await send(app.url, 'PUT', '/api/v3/metadata/g', undefined, { accept: '*/*' });
  t.equal(none.status, 400, 'no body at all is refused, not taken as null');
  t.equal((await send(app.url, 'PUT', '/api/v3/process/d/metadata/k', 'null')).status, 200, 'null deletes');
  t.equal((await app.request('GET', '/api/v3/process/d/metadata')).body, null);

  // Python: Content-Type on DELETE with Content-Length 0; Go/fetch: the type with no length at all
  const del = await send(app.url, 'DELETE', '/api/v3/process/d');
  t.equal(del.status, 200, del.text);
  t.equal(del.text, '"OK"');
  const again = await rawRequest(app.url, 'DELETE', '/api/v3/process/d', { headers: PY });
  t.equal(again.status, 404);
  t.same(again.json, { code: 404, message: 'Unknown process ID', details: ['unknown process'] });
});

t.test('lenient(): the schema walk on its own', async (t) => {
  t.same(lenient(ProcessConfig as never, { input: null, output: [null], options: null, limits: null, reference: null }),
    { output: [{}], options: [] }, 'required list: null dropped so validation refuses it; others emptied or dropped');
  const src = { options: null };
  lenient(ProcessConfig as never, src);
  t.same(src, { options: null }, 'the input is not mutated');
});

t.test('query parameters: a repeated one counts with its first value; empty filter = everything', async (t) => {
  const app = await startApp(t);
  for (const id of ['qa', 'qb']) t.equal((await app.request('POST', '/api/v3/process', { body: nullProcess(id, { reference: 'r' }) })).status, 200);
  const r = await rawRequest(app.url, 'GET', '/api/v3/process?id=qa&id=qb&filter=', { headers: { ...PY, 'content-length': '0' } });
  t.equal(r.status, 200, r.text);
  const list = r.json as any[];
  t.same(list.map((p) => p.id), ['qa']);
  t.ok(list[0].config && list[0].state, 'an empty filter returns all parts');
  const one = await rawRequest(app.url, 'GET', '/api/v3/process/qb?filter=config&filter=state', { headers: PY });
  t.equal(one.status, 200);
  t.ok((one.json as any).config);
  t.notOk('state' in (one.json as any));
});
