import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { addProcess, command, nullProcess, waitState, VIDEO_IN } from '../../core/process/helpers.ts';
import { waitFor } from '../../helpers/wait.ts';
import { expectedProcess, gql, gqlData, PROCESS_FIELDS } from './helpers.ts';

/** A process that runs a second of video to the null muxer and finishes by itself. */
const shortRun = (id: string) => ({
  id, reference: 'short', autostart: true,
  input: [{ id: 'in', address: 'testsrc2=size=160x120:rate=10:duration=1', options: ['-f', 'lavfi'] }],
  output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
  // limits far above what a second of tiny video needs: only their conversion is under test
  limits: { cpu_usage: 100, memory_mbytes: 512, waitfor_seconds: 30 },
});

t.test('processes and process(id) answer what GET /api/v3/process answers, in the reference shape', async (t) => {
  const app = await startApp(t);
  await addProcess(app, shortRun('done'));
  await addProcess(app, nullProcess('idle', { reference: 'idle-ref' }));
  t.equal((await app.request('PUT', '/api/v3/process/done/metadata/note', { body: { a: [1, 'b'] } })).status, 200);
  // a finished run holds still: its report, history and state can be compared exactly
  const finished = async (history: number) => waitFor(async () => {
    const r = (await app.request('GET', '/api/v3/process/done')).body;
    return r.state.exec === 'finished' && r.report.log.length > 0 && r.report.history.length === history;
  }, { what: 'the short run to finish', timeout: 30_000 });
  await finished(0);
  // a second run puts the first one into the history
  t.equal(await command(app, 'done', 'stop'), 200);
  t.equal(await command(app, 'done', 'start'), 200);
  await finished(1);

  const rest = (await app.request('GET', '/api/v3/process')).body as any[];
  const { processes } = await gqlData(app, `{ processes { ${PROCESS_FIELDS} } }`);
  t.same(processes, rest.map(expectedProcess), 'every process, every field');
  t.ok(processes.find((p: any) => p.id === 'done').report.history[0].log.length > 0, 'a history with log lines');
  t.same(processes.find((p: any) => p.id === 'done').metadata, { note: { a: [1, 'b'] } });
  t.equal(processes.find((p: any) => p.id === 'idle').metadata, null);

  const one = await gqlData(app, 'query ($id: ID!) { process(id: $id) { id config { limits { memory_bytes } } state { state order } } }', { id: 'done' });
  t.same(one.process, { id: 'done', config: { limits: { memory_bytes: 512 * 1024 * 1024 } }, state: { state: 'finished', order: 'start' } });

  const unknown = await gql(app, '{ process(id: "nope") { id } }');
  t.equal(unknown.status, 200);
  t.same(unknown.body.data, { process: null });
  t.match(unknown.body.errors, [{ message: 'Unknown process ID', path: ['process'], extensions: { code: 404 } }]);

  const ids = await gqlData(app, '{ processes { id reference } }');
  t.same(ids.processes, rest.map((p) => ({ id: p.id, reference: p.reference })), 'a selection without parts');
});

t.test('a running process: state and progress agree with REST read just before and after', async (t) => {
  const app = await startApp(t);
  await addProcess(app, nullProcess('live', { autostart: true }));
  await waitState(app, 'live', (s) => s.exec === 'running' && s.progress.frame >= 10 && s.progress.inputs.length > 0, 'progress');

  const before = (await app.request('GET', '/api/v3/process/live')).body;
  const { process: g } = await gqlData(app, `{ process(id: "live") { ${PROCESS_FIELDS} } }`);
  const after = (await app.request('GET', '/api/v3/process/live')).body;

  const exp = expectedProcess(after);
  t.same(g.config, exp.config);
  t.same(g.metadata, null);
  t.same([g.id, g.type, g.reference, g.created_at], [exp.id, exp.type, exp.reference, exp.created_at]);
  t.same([g.state.state, g.state.order, g.state.command, g.state.reconnect_seconds], ['running', 'start', after.state.command, -1]);
  const between = (what: string, v: number, a: number, b: number) => t.ok(a <= v && v <= b, `${what}: ${a} <= ${v} <= ${b}`);
  between('frame', g.state.progress.frame, before.state.progress.frame, after.state.progress.frame);
  between('size_kb (bytes)', g.state.progress.size_kb, before.state.progress.size_kb * 1024, after.state.progress.size_kb * 1024);
  between('runtime_seconds', g.state.runtime_seconds, before.state.runtime_seconds, after.state.runtime_seconds);
  const stream = (s: any) => ({ id: s.id, address: s.address, index: s.index, stream: s.stream, format: s.format, type: s.type, codec: s.codec, pixfmt: s.pixfmt, width: s.width, height: s.height });
  t.same(g.state.progress.input.map(stream), exp.state.progress.input.map(stream), 'the same input streams');
  t.same(g.state.progress.output.map(stream), exp.state.progress.output.map(stream), 'the same output streams');
  t.equal(g.state.progress.input[0].address, VIDEO_IN.address);
  t.same(g.state.progress.input[0].avstream.input, { state: '', packet: 0, time: 0, size_kb: 0 }, 'an all-zero avstream');
  t.same(g.report.prelude, after.report.prelude);
});

t.test('probe(id) answers what GET /api/v3/process/{id}/probe answers', async (t) => {
  const app = await startApp(t);
  await addProcess(app, nullProcess('p'));
  const rest = (await app.request('GET', '/api/v3/process/p/probe')).body;
  const { probe } = await gqlData(app, '{ probe(id: "p") { streams { url index stream language type codec coder bitrate_kbps duration_seconds fps pix_fmt width height sampling layout channels } log } }');
  t.ok(rest.streams.length > 0, 'a stream found');
  t.same(probe.streams, rest.streams.map(({ format: _f, duration_sec, sampling_hz, ...s }: any) => ({ ...s, duration_seconds: duration_sec, sampling: sampling_hz })));
  t.same(probe.log, rest.log);
  const unknown = await gqlData(app, '{ probe(id: "nope") { streams { url } log } }');
  t.same(unknown.probe, (await app.request('GET', '/api/v3/process/nope/probe')).body);
});

t.test('a kept answer never hides a change: metadata, a new process, a command', async (t) => {
  const app = await startApp(t);
  await addProcess(app, nullProcess('a'));
  const q = '{ processes { id state { order } metadata } }';
  const first = await gqlData(app, q);
  t.same(first, await gqlData(app, q), 'the same answer twice');
  t.same(first.processes, [{ id: 'a', state: { order: 'stop' }, metadata: null }]);

  await app.request('PUT', '/api/v3/process/a/metadata/k', { body: 'v' });
  t.same((await gqlData(app, q)).processes, [{ id: 'a', state: { order: 'stop' }, metadata: { k: 'v' } }], 'metadata');

  await addProcess(app, nullProcess('b'));
  t.same((await gqlData(app, q)).processes.map((p: any) => p.id), ['a', 'b'], 'a new process');

  await command(app, 'b', 'start');
  await waitFor(async () => (await gqlData(app, q)).processes[1].state.order === 'start', { what: 'the order' });
  await command(app, 'b', 'stop');
  await waitFor(async () => (await gqlData(app, q)).processes[1].state.order === 'stop', { what: 'the order' });

  await app.request('DELETE', '/api/v3/process/a');
  t.same((await gqlData(app, '{ process(id: "b") { id } }')).process, { id: 'b' });
  t.same((await gql(app, '{ process(id: "a") { id } }')).body.data, { process: null }, 'a deleted process');
  t.same((await gqlData(app, q)).processes.map((p: any) => p.id), ['b']);
});
