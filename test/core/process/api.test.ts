import t from 'tap';
import { Value } from '@sinclair/typebox/value';
import { Process, ProcessConfig } from '../../../core/process/schema.ts';
import { startApp } from '../../helpers/app.ts';
import { addProcess, command, nullProcess, state, VIDEO_IN, NULL_OUT, waitState } from './helpers.ts';

t.test('add: defaults, generated IDs, type as given, autostart', async (t) => {
  const app = await startApp(t);
  const r = await app.request('POST', '/api/v3/process', { body: { input: [{ address: VIDEO_IN.address, options: VIDEO_IN.options }], output: [{ address: '-', options: ['-f', 'null'] }] } });
  t.equal(r.status, 200);
  const c = r.body;
  t.match(c.id, /^[2-9A-HJ-NP-Za-km-z]{22}$/, 'a 22-character short UUID');
  t.equal(c.type, 'encoder', 'type defaults to encoder');
  t.match(c.input[0].id, /^.{22}$/);
  t.match(c.output[0].id, /^.{22}$/);
  t.same(c.options, []);
  t.same(c.limits, { cpu_usage: 0, memory_mbytes: 0, waitfor_seconds: 0 });
  t.equal(c.autostart, true);
  t.notOk('cleanup' in c.input[0], 'inputs never show cleanup');
  const s = await waitState(app, c.id, (x) => x.exec === 'running', 'running without autostart field');
  t.equal(s.order, 'start');

  const ff = await addProcess(app, nullProcess('ff', { type: 'ffmpeg' }));
  t.equal(ff.type, 'ffmpeg', 'the original name is returned as given');
  t.equal((await app.request('GET', '/api/v3/process/ff')).body.type, 'ffmpeg');
  t.equal((await state(app, 'ff')).order, 'stop', 'autostart false: order stop');

  for (const type of ['foobar', '', 'Encoder']) {
    const bad = await app.request('POST', '/api/v3/process', { body: nullProcess('t1', { type }) });
    t.equal(bad.status, 400, `type ${JSON.stringify(type)} is refused`);
    t.equal(bad.body.message, 'Unsupported process type');
  }
  const dup = await app.request('POST', '/api/v3/process', { body: nullProcess('ff') });
  t.equal(dup.status, 400);
  t.same(dup.body, { code: 400, message: 'Invalid process config', details: ['process already exists'] });
  const noIo = await app.request('POST', '/api/v3/process', { body: { id: 'x', input: [], output: [NULL_OUT] } });
  t.same(noIo.body, { code: 400, message: 'At least one input and one output need to be defined', details: [] });
});

t.test('list filters, get, config, state, report', async (t) => {
  const app = await startApp(t);
  for (const [id, reference] of [['foo_aaa_1', 'ref1'], ['foo_bbb_2', 'ref2'], ['bar_bbb_3', 'ref1']]) {
    await addProcess(app, nullProcess(id!, { reference, input: [{ ...VIDEO_IN, address: '{processid}:{reference}' }] }));
  }
  const ids = async (q: string) => ((await app.request('GET', `/api/v3/process${q}`)).body as { id: string }[]).map((p) => p.id).sort();
  t.same(await ids(''), ['bar_bbb_3', 'foo_aaa_1', 'foo_bbb_2']);
  t.same(await ids('?idpattern=foo_*'), ['foo_aaa_1', 'foo_bbb_2']);
  t.same(await ids('?idpattern=*_bbb_*'), ['bar_bbb_3', 'foo_bbb_2']);
  t.same(await ids('?refpattern=ref1'), ['bar_bbb_3', 'foo_aaa_1']);
  t.same(await ids('?idpattern=foo_*&refpattern=ref1'), ['foo_aaa_1'], 'patterns intersect');
  t.same(await ids('?idpattern={foo,bar}_bbb_?'), ['bar_bbb_3', 'foo_bbb_2']);
  t.same(await ids('?idpattern=[fb]oo_*'), ['foo_aaa_1', 'foo_bbb_2']);
  t.same(await ids('?idpattern=foo_[aaa'), [], 'a malformed glob selects nothing');
  t.same(await ids('?reference=ref2'), ['foo_bbb_2']);
  t.same(await ids('?id=foo_aaa_1,bar_bbb_3'), ['bar_bbb_3', 'foo_aaa_1']);
  t.same(await ids('?id=foo_aaa_1&reference=ref2'), ['foo_aaa_1'], 'id overrides reference (interface)');

  const all = (await app.request('GET', '/api/v3/process?id=foo_aaa_1')).body[0];
  t.same(Object.keys(all).sort(), ['config', 'created_at', 'id', 'metadata', 'reference', 'report', 'state', 'type', 'updated_at']);
  t.equal(all.metadata, null);
  t.ok(Value.Check(Process, all) && Value.Check(ProcessConfig, all.config), 'the written JSON matches the schemas');
  t.equal(all.config.input[0].address, '{processid}:{reference}', 'the config keeps its placeholders');
  t.same(all.state.command.slice(0, 5), ['-re', '-f', 'lavfi', '-i', 'foo_aaa_1:ref1'], 'the command has them resolved');
  const some = (await app.request('GET', '/api/v3/process?id=foo_aaa_1&filter=state,bogus')).body[0];
  t.same(Object.keys(some).sort(), ['created_at', 'id', 'reference', 'state', 'type', 'updated_at']);
  const none = (await app.request('GET', '/api/v3/process/foo_aaa_1?filter=bogus')).body;
  t.same(Object.keys(none).sort(), ['created_at', 'id', 'reference', 'type', 'updated_at'], 'only unknown names: base fields only');

  const st = await state(app, 'foo_aaa_1');
  t.same({ order: st.order, exec: st.exec, reconnect_seconds: st.reconnect_seconds, memory_bytes: st.memory_bytes, cpu_usage: st.cpu_usage },
    { order: 'stop', exec: 'finished', reconnect_seconds: -1, memory_bytes: 0, cpu_usage: 0 });
  t.same(st.progress.inputs, []);
  const rep = await app.request('GET', '/api/v3/process/foo_aaa_1/report');
  t.equal(rep.status, 200);
  t.same({ prelude: rep.body.prelude, log: rep.body.log, history: rep.body.history }, { prelude: [], log: [], history: [] });
  const cfg = await app.request('GET', '/api/v3/process/foo_aaa_1/config');
  t.equal(cfg.body.id, 'foo_aaa_1');

  for (const path of ['', '/config', '/state', '/report', '/metadata', '/metadata/x']) {
    const r = await app.request('GET', `/api/v3/process/nope${path}`);
    t.equal(r.status, 404, `GET nope${path}`);
    t.equal(r.body.message, 'Unknown process ID');
  }
});

t.test('replace (PUT): merge, rename, created_at kept, errors', async (t) => {
  const app = await startApp(t);
  const first = await addProcess(app, nullProcess('test', { reference: 'r', input: [{ ...VIDEO_IN, options: ['-re', '-f', 'lavfi'] }] }));
  const before = (await app.request('GET', '/api/v3/process/test')).body;

  const bad = await app.request('PUT', '/api/v3/process/test', { body: { input: [VIDEO_IN], output: [{ id: 'out', address: '' }] } });
  t.equal(bad.status, 400);
  t.equal(bad.body.message, "Process can't be updated");
  t.equal((await app.request('GET', '/api/v3/process/test')).status, 200, 'the old process is untouched');

  t.equal((await app.request('PUT', '/api/v3/process/nope', { body: nullProcess('nope') })).status, 404);

  // elements merge index by index: an input without options keeps the previous options
  const same = await app.request('PUT', '/api/v3/process/test', { body: { input: [{ address: 'testsrc2=rate=5' }], output: [NULL_OUT] } });
  t.equal(same.status, 200);
  t.same(same.body.input[0], { id: 'in', address: 'testsrc2=rate=5', options: ['-re', '-f', 'lavfi'] });
  t.equal(same.body.reference, 'r', 'absent fields keep their value');

  await new Promise((r) => setTimeout(r, 1100));
  const renamed = await app.request('PUT', '/api/v3/process/test', { body: { ...first, id: 'test2' } });
  t.equal(renamed.status, 200);
  t.equal(renamed.body.id, 'test2');
  t.equal((await app.request('GET', '/api/v3/process/test')).status, 404, 'old id gone');
  const after = (await app.request('GET', '/api/v3/process/test2')).body;
  t.equal(after.created_at, before.created_at, 'created_at is kept');
  t.ok(after.updated_at > before.updated_at, 'updated_at moves');

  await addProcess(app, nullProcess('other'));
  const clash = await app.request('PUT', '/api/v3/process/test2', { body: { ...first, id: 'other' } });
  t.same(clash.body, { code: 400, message: "Process can't be updated", details: ['process already exists'] });
});

t.test('delete and commands', async (t) => {
  const app = await startApp(t);
  await addProcess(app, nullProcess('p'));
  t.equal((await app.request('DELETE', '/api/v3/process/nope')).status, 404);
  t.equal(await command(app, 'nope', 'start'), 404, 'unknown process: 404 (interface), not 400');
  const bad = await app.request('PUT', '/api/v3/process/p/command', { body: { command: 'jump' } });
  t.same(bad.body, { code: 400, message: 'Unknown command provided', details: ['Known commands are: start, stop, reload, restart'] });
  t.equal((await app.request('PUT', '/api/v3/process/p/command', { body: {} })).status, 400, 'missing command');

  t.equal(await command(app, 'p', 'restart'), 200, 'restart of a stopped process is a no-op');
  t.equal((await state(app, 'p')).order, 'stop');
  t.equal(await command(app, 'p', 'start'), 200);
  // stop once ffmpeg is encoding: a SIGINT before it installed its handler would kill it
  await waitState(app, 'p', (s) => s.exec === 'running' && s.progress.frame > 0, 'running with frames');
  t.equal(await command(app, 'p', 'start'), 200, 'start is idempotent');
  t.equal(await command(app, 'p', 'stop'), 200);
  const s = await state(app, 'p');
  t.same([s.order, s.exec], ['stop', 'finished'], 'stop waits for the exit');
  t.equal(await command(app, 'p', 'stop'), 200, 'stop is idempotent');
  t.equal(await command(app, 'p', 'reload'), 200);
  t.equal((await state(app, 'p')).order, 'stop', 'reload keeps order stop');

  const del = await app.request('DELETE', '/api/v3/process/p');
  t.equal(del.status, 200);
  t.equal(del.text, '"OK"');
  t.equal((await app.request('GET', '/api/v3/process/p')).status, 404);
});

t.test('process metadata', async (t) => {
  const app = await startApp(t);
  await addProcess(app, nullProcess('m'));
  t.equal((await app.request('GET', '/api/v3/process/m/metadata')).text, 'null');
  const put = await app.request('PUT', '/api/v3/process/m/metadata/ui', { body: { a: [1, 2] } });
  t.same([put.status, put.body], [200, { a: [1, 2] }]);
  t.equal((await app.request('PUT', '/api/v3/process/m/metadata/s', { body: 'text' })).text, '"text"');
  t.same((await app.request('GET', '/api/v3/process/m/metadata/s')).body, 'text', 'a string value comes back as JSON');
  t.same((await app.request('GET', '/api/v3/process/m/metadata')).body, { ui: { a: [1, 2] }, s: 'text' });
  t.same((await app.request('GET', '/api/v3/process/m/metadata/')).body, { ui: { a: [1, 2] }, s: 'text' }, 'an empty key returns all');
  const missing = await app.request('GET', '/api/v3/process/m/metadata/none');
  t.same(missing.body, { code: 404, message: 'Unknown process ID', details: ['unknown key'] });
  t.equal((await app.request('PUT', '/api/v3/process/nope/metadata/x', { body: 1 })).status, 404);
  t.equal((await app.request('PUT', '/api/v3/process/m/metadata/', { body: 1 })).status, 400, 'empty key');
  t.equal((await app.request('PUT', '/api/v3/process/m/metadata/x', { raw: 'nojson', headers: { 'content-type': 'application/json' } })).status, 400);
  await app.request('PUT', '/api/v3/process/m/metadata/ui', { raw: 'null', headers: { 'content-type': 'application/json' } });
  await app.request('PUT', '/api/v3/process/m/metadata/s', { raw: 'null', headers: { 'content-type': 'application/json' } });
  t.equal((await app.request('GET', '/api/v3/process/m/metadata')).text, 'null', 'deleting the last key leaves null');
  const listed = (await app.request('GET', '/api/v3/process?filter=metadata')).body[0];
  t.equal(listed.metadata, null);
});

t.test('validation: access lists, disk root, references, max_processes', async (t) => {
  const app = await startApp(t, {
    config: { encoder: { max_processes: 1, access: { input: { allow: ['^testsrc', '^#', '^https?://', '^/'], block: ['^http://blocked'] } } } },
  });
  const add = (body: Record<string, unknown>) => app.request('POST', '/api/v3/process', { body });
  const rejected = await add(nullProcess('a', { input: [{ ...VIDEO_IN, address: 'sine' }] }));
  t.equal(rejected.status, 400);
  t.match(rejected.body.details[0], /the address for input '#a:in' \(sine\) is invalid: address is not allowed/);
  t.equal((await add(nullProcess('b', { input: [{ ...VIDEO_IN, address: 'http://blocked/x' }] }))).status, 400, 'block wins');
  const disk = `${app.dir}/disk`;
  for (const [address, ok] of [['/etc/passwd', false], [`${disk}/../../etc/passwd`, false], ['/dev/null', true], [`${disk}/x.mp4`, true],
    [`file:${disk}/y.mp4`, true], ['{diskfs}/z.mp4', true], [`${disk}/a.mkv|/etc/passwd`, false], ['[f=mpegts]udp://10.0.1.255:1234/', true],
    [`[onfail=ignore]${disk}/a.mkv|[f=mpegts]udp://127.0.0.1:1234`, true], ['relative.mp4', false]] as const) {
    const r = await add(nullProcess(`o${Math.random()}`, { output: [{ id: 'o', address, options: ['-f', 'null'] }] }));
    t.equal(r.status, ok ? 200 : 400, `output ${address}`);
    if (!ok) t.match(r.body.details[0], /the address for output '#.*:o' is invalid/);
  }

  await addProcess(app, nullProcess('src', { output: [{ id: 'out', address: '{diskfs}/{processid}.ts', options: ['-f', 'mpegts'] }] }));
  const ref = await addProcess(app, nullProcess('dst', { input: [{ id: 'in', address: '#src:output=out', options: [] }] }));
  t.equal(ref.input[0].address, '#src:output=out');
  t.equal((await state(app, 'dst')).command[1], `${disk}/src.ts`, 'a reference resolves to the other output');
  for (const [address, why] of [['#src:foo=out', 'invalid format'], ['#dst2:output=out', 'self-reference not possible'],
    ['#none:output=out', "unknown process 'none'"], ['#src:output=none', "the process 'src' has no outputs with the ID 'none'"]]) {
    const r = await add(nullProcess('dst2', { input: [{ id: 'in', address, options: [] }] }));
    t.equal(r.status, 400, address);
    t.match(r.body.details[0], why);
  }

  t.equal((await add(nullProcess('run1', { autostart: true }))).status, 200);
  const over = await add(nullProcess('run2', { autostart: true }));
  t.same(over.body.details, ['max. number of running processes (1) reached']);
  t.equal((await app.request('GET', '/api/v3/process/run2')).status, 404, 'a refused autostart adds nothing');
  const cmd = await app.request('PUT', '/api/v3/process/src/command', { body: { command: 'start' } });
  t.same(cmd.body, { code: 400, message: 'Command failed', details: ['max. number of running processes (1) reached'] });
  t.equal(await command(app, 'run1', 'stop'), 200);
  t.equal(await command(app, 'src', 'start'), 200, 'a slot is free again');
});

t.test('probe and skills', async (t) => {
  const app = await startApp(t);
  await addProcess(app, nullProcess('p', { input: [VIDEO_IN, { id: 'a', address: 'sine', options: ['-f', 'lavfi'] }] }));
  const probe = await app.request('GET', '/api/v3/process/p/probe');
  t.equal(probe.status, 200);
  t.equal(probe.body.streams.length, 2);
  t.match(probe.body.streams[0], { url: VIDEO_IN.address, format: 'lavfi', index: 0, type: 'video', width: 160, height: 120, language: 'und' });
  t.match(probe.body.streams[1], { index: 1, type: 'audio', codec: 'pcm_s16le', sampling_hz: 44100 });
  t.match(probe.text, /"bitrate_kbps":705,/, 'probe floats follow rule N');
  const unknown = await app.request('GET', '/api/v3/process/nope/probe');
  t.same(unknown.body, { streams: [], log: ['Unknown process ID (nope)'] });

  const skills = await app.request('GET', '/api/v3/skills');
  t.equal(skills.status, 200);
  t.match(skills.body.ffmpeg.version, /^\d+\.\d+\.\d+$/);
  t.ok(skills.body.filter.some((f: { id: string }) => f.id === 'testsrc2'));
  t.ok(skills.body.codecs.video.some((c: { id: string }) => c.id === 'h264'));
  const reload = await app.request('GET', '/api/v3/skills/reload');
  t.equal(reload.body.ffmpeg.version, skills.body.ffmpeg.version);
});

t.test('NUL or a lone surrogate anywhere in a process config is 400 at add and replace, nothing stored', async (t) => {
  const app = await startApp(t);
  const good = { id: 'textual', input: [{ address: VIDEO_IN.address, options: VIDEO_IN.options }], output: [{ address: '-', options: ['-f', 'null'] }] };
  t.equal((await app.request('POST', '/api/v3/process', { body: good })).status, 200);
  const bad: Array<[string, unknown]> = [
    ['output.0.address', { ...good, id: 'b1', output: [{ address: '{memfs}\u0000/x.m3u8', options: [] }] }],
    ['input.0.options.1', { ...good, id: 'b2', input: [{ address: VIDEO_IN.address, options: ['-re', 'a\u0000b'] }] }],
    ['reference', { ...good, id: 'b3', reference: 'cam\ud800' }],
    ['output.0.cleanup.0.pattern', { ...good, id: 'b4', output: [{ address: '-', options: ['-f', 'null'], cleanup: [{ pattern: 'memfs:/x\u0000*' }] }] }],
  ];
  for (const [where, body] of bad) {
    const r = await app.request('POST', '/api/v3/process', { body });
    t.match([r.status, r.body], [400, { message: 'Invalid process config', details: [new RegExp(`^${where.replace(/\./g, '\\.')} holds a NUL`)] }], `add: ${where}`);
  }
  const put = await app.request('PUT', '/api/v3/process/textual', { body: { ...good, output: [{ address: '-', options: ['-f', 'null\u0000'] }] } });
  t.equal(put.status, 400, 'replace: the same');
  t.same((await app.request('GET', '/api/v3/process/textual/config')).body.output[0].options, ['-f', 'null'], 'the stored config unchanged');
  t.same((await app.request('GET', '/api/v3/process?idpattern=b*')).body, [], 'none of the refused stored');
  t.equal((await app.request('POST', '/api/v3/process', { body: { ...good, id: 'fine', reference: 'caf\u00e9 \ud83c\udfa5' } })).status, 200, 'any well-formed text is taken');
});
