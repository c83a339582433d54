import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { NULL_OUT, VIDEO_IN } from './helpers.ts';

/*
 * A hundred malformed process bodies: each is a 400 with the Error body and a reason, nothing is
 * added, and the server keeps answering.
 */

const good = () => ({ id: 'ok', input: [{ ...VIDEO_IN }], output: [{ ...NULL_OUT }], autostart: false });
const withIn = (patch: Record<string, unknown>) => ({ ...good(), input: [{ ...VIDEO_IN, ...patch }] });
const withOut = (patch: Record<string, unknown>) => ({ ...good(), output: [{ ...NULL_OUT, ...patch }] });
const nest = (depth: number): unknown => (depth === 0 ? 'x' : [nest(depth - 1)]);
const big = (n: number) => 'a'.repeat(n);

function bodies(diskDir: string): [string, unknown][] {
  const cases: [string, unknown][] = [];
  const add = (name: string, body: unknown) => cases.push([name, body]);
  // whole body of the wrong kind
  for (const b of [null, [], [good()], 'text', 42, true]) add(`body ${JSON.stringify(b)?.slice(0, 20)}`, b);
  // wrong types of top-level fields (null is "not sent" or an empty list: lenient-body.test.ts)
  for (const [k, v] of [['id', 1], ['id', {}], ['id', []], ['type', 5], ['type', 'foo'], ['type', ''], ['reference', 7],
    ['reference', []], ['options', 'x'], ['options', [1]], ['options', [['-y']]], ['reconnect', 'yes'], ['reconnect', 1],
    ['reconnect_delay_seconds', -1], ['reconnect_delay_seconds', 'x'], ['reconnect_delay_seconds', 1.5], ['stale_timeout_seconds', -5],
    ['stale_timeout_seconds', 1e300], ['autostart', 'true'], ['autostart', 0], ['limits', 'x'], ['limits', []], ['limits', { cpu_usage: -1 }],
    ['limits', { cpu_usage: 101 }], ['limits', { cpu_usage: 'x' }], ['limits', { memory_mbytes: -1 }], ['limits', { memory_mbytes: 1.5 }],
    ['limits', { waitfor_seconds: 'x' }], ['limits', { cpu_usage: { a: 1 } }]] as const) {
    add(`${k}=${JSON.stringify(v)}`, { ...good(), [k]: v });
  }
  // missing or empty inputs and outputs
  const { input: _i, ...noInput } = good();
  const { output: _o, ...noOutput } = good();
  add('no input', noInput);
  add('no output', noOutput);
  add('neither', { id: 'x' });
  add('empty input', { ...good(), input: [] });
  add('empty output', { ...good(), output: [] });
  add('both empty', { ...good(), input: [], output: [] });
  // inputs and outputs of the wrong shape
  for (const v of ['x', {}, 5, null, [null], ['str'], [5], [[]], [[[]]]]) {
    add(`input ${JSON.stringify(v)}`, { ...good(), input: v });
    add(`output ${JSON.stringify(v)}`, { ...good(), output: v });
  }
  for (const [k, v] of [['address', 5], ['address', null], ['id', 7], ['options', 'x'], ['options', [1]], ['options', nest(50)]] as const) {
    add(`input.${k}=${JSON.stringify(v).slice(0, 20)}`, withIn({ [k]: v }));
    add(`output.${k}=${JSON.stringify(v).slice(0, 20)}`, withOut({ [k]: v }));
  }
  for (const c of ['x', [5], [{}], [{ pattern: 5 }], [{ pattern: 'mem:/x', max_files: -1 }], [{ pattern: 'mem:/x', purge_on_delete: 'y' }]]) {
    add(`cleanup ${JSON.stringify(c)}`, withOut({ cleanup: c }));
  }
  // bad IDs
  for (const id of ['', '   ', 'a\nb', 'a\u0000b', 'tab\there', big(2000)]) add(`id ${JSON.stringify(id).slice(0, 20)}`, { ...good(), id });
  add('input id with control char', withIn({ id: 'in\u0007' }));
  add('output id blank', withOut({ id: '  ' }));
  add('duplicate input ids', { ...good(), input: [VIDEO_IN, VIDEO_IN] });
  add('duplicate output ids', { ...good(), output: [NULL_OUT, NULL_OUT] });
  // invalid addresses, path traversal
  add('input address empty', withIn({ address: '' }));
  add('input address blank', withIn({ address: '   ' }));
  add('input address bad URL', withIn({ address: 'http://[::1/x' }));
  add('input self reference', withIn({ address: '#ok:output=out' }));
  add('input reference bad format', withIn({ address: '#other' }));
  for (const address of ['', '  ', '/etc/passwd', '../../etc/passwd', `${diskDir}/../secret`, `${diskDir}/a/../../b`,
    '{diskfs}/../../../etc/cron.d/x', 'file:/etc/shadow', '/tmp/elsewhere.ts', `${diskDir}/ok.ts|/etc/passwd`,
    '[f=mpegts]/root/x.ts', 'http://[::1:80/', 'pipe:1']) {
    add(`output address ${address}`, withOut({ address }));
  }
  // huge strings and lists
  add('huge address', withIn({ address: big(200_000) }));
  add('huge option', withOut({ options: ['-f', big(200_000)] }));
  add('huge reference', { ...good(), reference: big(100_000) });
  add('too many options', { ...good(), options: new Array(5000).fill('-y') });
  add('too many inputs', { ...good(), input: new Array(300).fill(0).map((_, i) => ({ ...VIDEO_IN, id: `i${i}` })) });
  add('huge cleanup pattern', withOut({ cleanup: [{ pattern: `mem:/${big(10_000)}` }] }));
  return cases;
}

t.test('a hundred malformed process bodies are each a 400 and crash nothing', async (t) => {
  const app = await startApp(t);
  const cases = bodies(`${app.dir}/disk`);
  t.ok(cases.length >= 100, `${cases.length} cases`);
  for (const [name, body] of cases) {
    const r = await app.request('POST', '/api/v3/process', { raw: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    t.equal(r.status, 400, name);
    t.ok(r.body && r.body.code === 400 && typeof r.body.message === 'string' && r.body.message.length > 0, `${name}: Error body`);
    t.ok(Array.isArray(r.body?.details) && r.body.details.every((d: unknown) => typeof d === 'string'), `${name}: details`);
  }
  // bodies that are not JSON at all
  for (const [raw, type] of [['{"id":', 'application/json'], ['', 'application/json'], ['id=1', 'application/x-www-form-urlencoded'],
    [JSON.stringify(good()), 'text/plain']]) {
    const r = await app.request('POST', '/api/v3/process', { raw, headers: { 'content-type': type } });
    t.equal(r.status, 400, `raw ${JSON.stringify(raw).slice(0, 20)} as ${type}`);
    t.equal(r.body.message, 'Invalid JSON');
  }
  // a duplicate ID is refused too, and PUT takes the same checks
  t.equal((await app.request('POST', '/api/v3/process', { body: good() })).status, 200);
  t.equal((await app.request('POST', '/api/v3/process', { body: good() })).status, 400, 'duplicate process id');
  for (const [name, body] of cases.slice(0, 60)) {
    if (name.startsWith('id ') || name.startsWith('body ')) continue;
    // a PUT is decoded onto the current config: absent input/output, or a null element, keep their value
    if (['no input', 'no output', 'neither', 'input [null]', 'output [null]'].includes(name)) continue;
    const r = await app.request('PUT', '/api/v3/process/ok', { raw: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    t.equal(r.status, 400, `PUT ${name}`);
  }
  const list = await app.request('GET', '/api/v3/process');
  t.equal(list.status, 200, 'the server still answers');
  t.same(list.body.map((p: { id: string }) => p.id), ['ok'], 'nothing malformed was added');
  t.same(list.body[0].config.input, [VIDEO_IN], 'the process is untouched by the refused replacements');
});
