import t from 'tap';
import { Value } from '@sinclair/typebox/value';
import { Process, ProcessReport, ProcessState, Probe } from '../../../core/process/schema.ts';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { addProcess, command, ffmpegPids, nullProcess, state, waitState } from './helpers.ts';

const X264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10'];

t.test('HLS from lavfi into {memfs}: running, frames and fps, playlist and segments', async (t) => {
  const app = await startApp(t);
  await addProcess(app, {
    id: 'hls1',
    input: [
      { id: 'video', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] },
      { id: 'audio', address: 'sine=frequency=440:sample_rate=44100', options: ['-re', '-f', 'lavfi'] },
    ],
    output: [{
      id: 'hls',
      address: '{memfs}/{processid}.m3u8',
      options: [...X264, '-c:a', 'aac', '-b:a', '64k', '-f', 'hls', '-hls_time', '1', '-hls_list_size', '4',
        '-hls_segment_filename', '{memfs}/{processid}_%03d.ts', '-method', 'PUT'],
    }],
  });
  const s = await waitState(app, 'hls1', (x) => x.exec === 'running' && x.progress.frame >= 20 && x.progress.fps > 0, 'frames and fps');
  t.equal(s.order, 'start');
  t.ok(s.runtime_seconds >= 0);
  t.ok(s.memory_bytes > 0 || s.progress.frame > 0);
  t.same(s.progress.inputs.map((i: { id: string; type: string }) => [i.id, i.type]), [['video', 'video'], ['audio', 'audio']]);
  t.same(s.progress.outputs.map((o: { id: string; type: string }) => [o.id, o.type]), [['hls', 'video'], ['hls', 'audio']]);
  t.match(s.command.at(-1), /^http:\/\/.*:\d+\/memfs\/hls1\.m3u8$/, '{memfs} resolved to the real port');

  const full = (await app.request('GET', '/api/v3/process/hls1')).body;
  t.ok(Value.Check(Process, full), `the written JSON matches the Process schema ${JSON.stringify([...Value.Errors(Process, full)].slice(0, 3))}`);
  t.ok(Value.Check(ProcessState, full.state) && Value.Check(ProcessReport, full.report));
  const probe = (await app.request('GET', '/api/v3/process/hls1/probe')).body;
  t.ok(Value.Check(Probe, probe) && probe.streams.length === 2, 'probe matches its schema');
  const raw = (await app.request('GET', '/api/v3/process/hls1/state')).text;
  t.match(raw, /"framerate":\{"min":\d+\.\d{3},"max":\d+\.\d{3},"avg":\d+\.\d{3}\}/, 'ProgressIO floats with 3 decimals');
  t.match(raw, /"pps":\d+\.\d{3}/);

  const files = await waitFor(async () => {
    const list = (await app.request('GET', '/api/v3/fs/mem')).body as { name: string }[];
    const names = list.map((f) => f.name);
    return names.includes('/hls1.m3u8') && names.some((n) => /^\/hls1_\d{3}\.ts$/.test(n)) ? names : undefined;
  }, { what: 'playlist and segments in memfs', timeout: 20_000 });
  t.ok(files.length >= 2);
  const playlist = await app.request('GET', '/memfs/hls1.m3u8');
  t.equal(playlist.status, 200);
  t.match(playlist.text, /#EXTM3U[\s\S]*hls1_\d{3}\.ts/);

  const rep = (await app.request('GET', '/api/v3/process/hls1/report')).body;
  t.ok(rep.prelude.some((l: string) => l.startsWith('Input #0, lavfi')), 'the prelude holds the input lines');
  t.ok(rep.log.length > 0 && rep.log.every((e: unknown[]) => typeof e[0] === 'string' && /^\d+$/.test(e[0] as string)));
  t.equal(await command(app, 'hls1', 'stop'), 200);
  const stopped = await state(app, 'hls1');
  t.same([stopped.exec, stopped.progress.frame, stopped.progress.outputs], ['finished', 0, []], 'progress resets at exit');
});

t.test('stop, start, restart (without reconnect), reload', async (t) => {
  const app = await startApp(t);
  const marker = `comment=life-${process.pid}`;
  await addProcess(app, nullProcess('life', { output: [{ id: 'out', address: '-', options: ['-metadata', marker, '-f', 'null'] }] }));
  t.equal(await command(app, 'life', 'start'), 200);
  await waitState(app, 'life', (s) => s.exec === 'running' && s.progress.frame > 0, 'running');
  const [pid1] = ffmpegPids(marker);
  t.ok(pid1, 'one ffmpeg runs');

  t.equal(await command(app, 'life', 'restart'), 200);
  await waitState(app, 'life', (s) => s.exec === 'running' && s.progress.frame > 0, 'running again after restart');
  const pids = ffmpegPids(marker);
  t.equal(pids.length, 1);
  t.not(pids[0], pid1, 'a new ffmpeg after restart, though reconnect is false');
  const rep = (await app.request('GET', '/api/v3/process/life/report')).body;
  t.ok(Value.Check(ProcessReport, rep), 'the report (with history) matches its schema');
  t.equal(rep.history.length, 1, 'the first run went to the history');
  t.equal(rep.history[0].exit_state, 'finished');

  t.equal(await command(app, 'life', 'reload'), 200);
  // frames first: a SIGINT before ffmpeg installed its handler would end it `killed`
  await waitState(app, 'life', (s) => s.exec === 'running' && s.order === 'start' && s.progress.frame > 0, 'running after reload');
  t.not(ffmpegPids(marker)[0], pids[0], 'reload restarts a started process');

  t.equal(await command(app, 'life', 'stop'), 200);
  t.same(ffmpegPids(marker), [], 'stop waits until ffmpeg is gone');
  t.equal((await state(app, 'life')).exec, 'finished');
  t.equal(await command(app, 'life', 'start'), 200);
  await waitState(app, 'life', (s) => s.exec === 'running', 'started again');
  await app.request('DELETE', '/api/v3/process/life');
  t.same(ffmpegPids(marker), [], 'delete stops it');
});

t.test('ffmpeg killed with SIGKILL comes back after the reconnect delay', async (t) => {
  const app = await startApp(t);
  const marker = `comment=kill-${process.pid}`;
  await addProcess(app, nullProcess('victim', {
    autostart: true, reconnect: true, reconnect_delay_seconds: 2,
    output: [{ id: 'out', address: '-', options: ['-metadata', marker, '-f', 'null'] }],
  }));
  await waitState(app, 'victim', (s) => s.exec === 'running' && s.progress.frame > 0, 'running');
  const [pid] = ffmpegPids(marker);
  process.kill(pid!, 'SIGKILL');
  const down = await waitState(app, 'victim', (s) => s.exec === 'killed', 'killed');
  t.ok(down.reconnect_seconds >= 0 && down.reconnect_seconds <= 2, `a reconnect is pending (${down.reconnect_seconds} s)`);
  t.equal(down.order, 'start', 'the order stays start');
  const killedAt = Date.now();
  await waitState(app, 'victim', (s) => s.exec === 'running', 'running again');
  t.ok(Date.now() - killedAt >= 1000, 'not before the delay');
  // `running` comes with the spawn; ffmpeg itself appears a moment later (below the confinement's wrapper)
  const again = await waitFor(() => ffmpegPids(marker).find((p) => p !== pid), { what: 'the new ffmpeg' });
  t.ok(again && again !== pid, 'a new ffmpeg');
});
