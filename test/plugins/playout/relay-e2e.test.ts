import t from 'tap';
import { connect } from 'node:net';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { processesRef, type ProcessesService } from '../../../sdk/index.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';
import { FFMPEG, lastColour, pidsWith, portRange, publish, run, solidImage, timing } from './helpers.ts';

/*
 * One service, one process reading `playout:{rtmp,name=cam}` into HLS in memfs, a live publisher:
 * the whole story of issue 15 against real ffmpeg. The assertions share the running service (suite
 * time); every wait polls with a generous deadline.
 */

const HLS = ['-c', 'copy', '-f', 'hls', '-hls_time', '1', '-hls_list_size', '8',
  '-hls_segment_filename', '{memfs}/pl_%04d.ts', '-method', 'PUT'];
const proc = {
  id: 'pl', reconnect: true, reconnect_delay_seconds: 1, autostart: true,
  input: [{ id: 'in', address: 'playout:{rtmp,name=cam}', options: ['-rw_timeout', '10000000'] }],
  output: [{ id: 'hls', address: '{memfs}/pl.m3u8', options: HLS }],
};

const isRed = ([r, g, b]: number[]) => r! > 180 && g! < 80 && b! < 80;

t.test('playout: a continuous HLS output through source loss, return, stream switch and reopen', async (t) => {
  const [min, max] = await portRange(10);
  const app = await startApp(t, {
    config: {
      rtmp: { enable: true, address: '127.0.0.1:0' },
      playout: { enable: true, min_port: min, max_port: max },
      storage: { memory: { auth: { enable: false } } },
    },
  });
  const rtmp = app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService;
  const processes = app.service.app.kernel.services.resolve(processesRef) as ProcessesService;
  const base = `rtmp://127.0.0.1:${rtmp.ports().rtmp}`;
  const api = '/api/v3/process/pl/playout/in';

  /** Segment names of the playlist, oldest first. */
  const playlist = async (): Promise<string[]> => {
    const r = await app.request('GET', '/memfs/pl.m3u8');
    return r.status === 200 ? r.text.split('\n').filter((l) => l && !l.startsWith('#')) : [];
  };
  const segment = async (name: string): Promise<Buffer> => {
    const r = await fetch(`${app.url}/memfs/${name.replace(/^.*\//, '')}`);
    if (r.status !== 200) throw new Error(`segment ${name}: ${r.status}`);
    return Buffer.from(await r.arrayBuffer());
  };
  /** Waits for `n` segments newer than those listed now; returns the newest one's bytes. */
  const fresh = async (n = 1): Promise<Buffer> => {
    const seen = new Set(await playlist());
    const names = await waitFor(async () => {
      const now = (await playlist()).filter((s) => !seen.has(s));
      return now.length >= n ? now : undefined;
    }, { what: `${n} new HLS segment(s)`, timeout: 30_000 });
    return segment(names[names.length - 1]!);
  };
  /**
   * Each listed segment starts where the previous one ended (its #EXTINF), within half a second,
   * and lasts 0-3 s (keyframes at least every second; a timestamp jump would show as a long one).
   */
  const continuous = async (what: string) => {
    const r = await app.request('GET', '/memfs/pl.m3u8');
    const entries = [...r.text.matchAll(/#EXTINF:([\d.]+),\s*\n([^\n#]+)/g)].map((m) => ({ duration: Number(m[1]), name: m[2]!.trim() }));
    let prev: { start: number; duration: number } | undefined;
    for (const e of entries) {
      const start = (await timing(await segment(e.name))).start;
      if (prev) {
        const end = prev.start + prev.duration;
        t.ok(Math.abs(start - end) < 0.5, `${what}: ${e.name} starts at ${start.toFixed(2)}, the previous ended at ${end.toFixed(2)}`);
      }
      t.ok(e.duration > 0 && e.duration < 3, `${what}: ${e.name} lasts ${e.duration} s`);
      prev = { start, duration: e.duration };
    }
  };

  const pub = publish(t, `${base}/cam`);
  // publishing before the process starts: the relay's first clip would otherwise be its 640x360 default
  await waitFor(() => rtmp.channels().length === 1, { what: 'the publisher', timeout: 30_000 });
  t.equal((await app.request('POST', '/api/v3/process', { body: proc })).status, 200);
  await fresh(2);

  // state.command shows the rewritten input with its port (the lowest of the range)
  const state = (await app.request('GET', '/api/v3/process/pl/state')).body;
  t.equal(state.exec, 'running');
  const i = state.command.indexOf('-i');
  t.same(state.command.slice(i - 2, i + 2), ['-f', 'mpegts', '-i', `tcp://127.0.0.1:${min}`], 'the input reads the relay');
  t.notOk(state.command.includes('-rw_timeout'), 'reading options went to the relay');
  const config = (await app.request('GET', '/api/v3/process/pl/config')).body;
  t.equal(config.input[0].address, 'playout:{rtmp,name=cam}', 'the stored config is unchanged');
  const probe = (await app.request('GET', '/api/v3/process/pl/probe')).body;
  t.match(probe.streams.find((x: { type: string }) => x.type === 'video'), { codec: 'h264', width: 320, height: 240, url: `${base}/cam` },
    'the probe reads the source behind playout:');
  const pids = pidsWith(`tcp://127.0.0.1:${min}`);
  t.equal(pids.length, 1, 'one ffmpeg reads the relay');
  const starts = processes.metrics('pl')!.states.starting;

  const s1 = await app.request('GET', `${api}/status`);
  t.equal(s1.status, 200);
  t.match(s1.body, { id: `playout:${base}/cam`, url: `${base}/cam`, looping: false, input: { state: 'running' }, output: { state: 'running' } });
  const s2 = await waitFor(async () => {
    const b = (await app.request('GET', `${api}/status`)).body;
    return b.input.packet > s1.body.input.packet && b.output.packet > s1.body.output.packet ? b : undefined;
  }, { what: 'status figures that move' });
  t.ok(s2.output.size_kb >= s1.body.output.size_kb, 'sizes grow');

  for (const [name, type, magic] of [['last.jpg', 'image/jpeg', 'ffd8ff'], ['x.png', 'image/png', '89504e47']] as const) {
    const r = await fetch(`${app.url}${api}/keyframe/${name}`);
    t.equal(r.status, 200, name);
    t.equal(r.headers.get('content-type'), type);
    const bytes = Buffer.from(await r.arrayBuffer());
    t.equal(bytes.subarray(0, magic.length / 2).toString('hex'), magic, `${name} magic bytes`);
    const d = await run(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-i', 'pipe:0', '-f', 'null', '-'], bytes);
    t.equal(d.code, 0, `${name} decodes`);
  }

  // the error frame: a refused image, then a solid red one
  const bad = await app.request('PUT', `${api}/errorframe/frame.jpg`, { raw: 'not an image', headers: { 'content-type': 'application/octet-stream' } });
  t.equal(bad.status, 400, 'an undecodable image is refused');
  t.equal(bad.body.message, 'Bad Request');
  t.ok(bad.body.details[0], 'with the reason');
  const red = await solidImage('red');
  const put = await app.request('PUT', `${api}/errorframe/red.png`, { raw: red, headers: { 'content-type': 'image/png' } });
  t.equal(put.status, 204, 'error frame set');
  t.equal((await app.request('GET', `${api}/errorframe/encode`)).status, 204, 'errorframe/encode');

  // the source drops: the output shows the error frame, the process keeps running
  pub.child.kill('SIGKILL');
  await pub.done;
  await waitFor(async () => isRed(await lastColour(await fresh())), { what: 'the error frame in the newest segment', timeout: 40_000 });
  t.ok((await app.request('GET', `${api}/status`)).body.looping, 'status says looping');
  await fresh(2);
  t.equal((await app.request('GET', '/api/v3/process/pl/state')).body.exec, 'running', 'the process never stopped');
  t.same(pidsWith(`tcp://127.0.0.1:${min}`), pids, 'same ffmpeg (no new pid)');
  t.equal(processes.metrics('pl')!.states.starting, starts, 'no restart');
  await continuous('source lost');

  // the source returns: so does the picture
  const pub2 = publish(t, `${base}/cam`);
  await waitFor(async () => !isRed(await lastColour(await fresh())), { what: 'the source back in the newest segment', timeout: 40_000 });
  await fresh(2);
  await continuous('source back');

  // a matching stream is switched to, a mismatching one refused with the old source kept
  publish(t, `${base}/cam2`);
  const big = publish(t, `${base}/big`, '640x360');
  await waitFor(() => rtmp.channels().length === 3, { what: 'three publishers' });
  const sw = await app.request('PUT', `${api}/stream`, { raw: `${base}/cam2`, headers: { 'content-type': 'text/plain' } });
  t.equal(sw.status, 204, 'matching stream switched');
  await waitFor(async () => (await app.request('GET', `${api}/status`)).body.url === `${base}/cam2`, { what: 'status url of the new stream' });
  await fresh(3);
  await continuous('after the switch');
  const mis = await app.request('PUT', `${api}/stream`, { raw: `${base}/big`, headers: { 'content-type': 'text/plain' } });
  t.equal(mis.status, 400, 'mismatching stream refused');
  t.match(mis.body.details[0], /640x360|size/, 'with the reason');
  t.equal((await app.request('GET', `${api}/status`)).body.url, `${base}/cam2`, 'old source kept');
  // fewer encoders for the rest (a loaded box): the first source and the big one are done
  big.child.kill('SIGKILL');
  pub2.child.kill('SIGKILL');
  const huge = await app.request('PUT', `${api}/stream`, { raw: 'x'.repeat(100_000), headers: { 'content-type': 'text/plain' } });
  t.same([huge.status, huge.body.message], [400, 'Failed to read request body'], 'a body over the limit');
  const empty = await app.request('PUT', `${api}/stream`, { raw: '', headers: { 'content-type': 'text/plain' } });
  t.equal(empty.status, 400, 'an empty URL is refused');

  // reopen: the source is closed and comes back by itself
  const re = await app.request('GET', `${api}/reopen`);
  t.equal(re.status, 200);
  await waitFor(async () => {
    const b = (await app.request('GET', `${api}/status`)).body;
    return b.input.state === 'running' && !b.looping;
  }, { what: 'the source reopened' });
  await fresh(2);
  t.same(pidsWith(`tcp://127.0.0.1:${min}`), pids, 'still the same ffmpeg');

  // the process's ffmpeg dies: the reconnect reads the same, still running relay
  const before = (await app.request('GET', `${api}/status`)).body;
  process.kill(pids[0]!, 'SIGKILL');
  const next = await waitFor(() => {
    const now = pidsWith(`tcp://127.0.0.1:${min}`);
    return now.length === 1 && now[0] !== pids[0] ? now : undefined;
  }, { what: 'the reconnected ffmpeg on the same port', timeout: 30_000 });
  t.ok(next, 'reconnected to the same relay port');
  await fresh(2);
  const after = (await app.request('GET', `${api}/status`)).body;
  t.ok(after.input.packet > before.input.packet, 'the relay kept counting: it was not restarted');
  t.equal(after.url, before.url, 'and kept its source');

  // 404s of the reference
  t.same((await app.request('GET', '/api/v3/process/nope/playout/in/status')).body.message, 'Unknown process or input');
  t.same((await app.request('GET', '/api/v3/process/pl/playout/other/status')).body,
    { code: 404, message: 'Unknown process or input', details: ["process 'pl' has no input 'other'"] });
  const plain = { id: 'plain', autostart: false, input: [{ id: 'in', address: 'rtmp://127.0.0.1/x', options: [] }], output: [{ id: 'o', address: '-', options: ['-f', 'null'] }] };
  t.equal((await app.request('POST', '/api/v3/process', { body: plain })).status, 200);
  const np = await app.request('GET', '/api/v3/process/plain/playout/in/status');
  t.equal(np.status, 404, 'an input without playout');
  t.same(np.body.details, ["input 'in' of process 'plain' has no playout"]);

  // stop: the relay goes with the process; start: a new one on the lowest free port
  t.equal((await app.request('PUT', '/api/v3/process/pl/command', { body: { command: 'stop' } })).status, 200);
  await waitFor(async () => (await app.request('GET', `${api}/status`)).status === 404, { what: 'the relay stopped with the process' });
  await waitFor(() => refused(min), { what: `port ${min} closed` });
  t.equal((await app.request('PUT', '/api/v3/process/pl/command', { body: { command: 'start' } })).status, 200);
  await waitFor(async () => (await app.request('GET', `${api}/status`)).status === 200, { what: 'a relay again' });

  // update: a changed input gets a new relay (lowest free port again); delete releases it
  const upd = { ...proc, input: [{ id: 'in', address: `playout:${base}/cam2`, options: [] }] };
  t.equal((await app.request('PUT', '/api/v3/process/pl', { body: upd })).status, 200);
  await waitFor(async () => (await app.request('GET', `${api}/status`)).body.url === `${base}/cam2`, { what: 'the relay of the updated input' });
  const cmd = (await app.request('GET', '/api/v3/process/pl/state')).body.command as string[];
  t.ok(cmd.includes(`tcp://127.0.0.1:${min}`), 'the port was released and taken again');
  t.equal((await app.request('DELETE', '/api/v3/process/pl')).status, 200);
  await waitFor(() => refused(min), { what: `port ${min} closed after delete` });
  t.equal((await app.request('GET', `${api}/status`)).status, 404);
});

t.test('pool exhausted: add and update refused with the reference message; api.read_only refuses playout writes', async (t) => {
  const [min, max] = await portRange(2);
  const app = await startApp(t, { config: { playout: { enable: true, min_port: min, max_port: max } } });
  const proc = (id: string, inputs: string[]) => ({
    id, reconnect: false, autostart: false,
    input: inputs.map((i) => ({ id: i, address: 'playout:rtmp://127.0.0.1:9/none', options: [] })),
    output: [{ id: 'o', address: '-', options: ['-f', 'null'] }],
  });
  const exhausted = `no more ports available from range [${min},${max}]`;
  const three = await app.request('POST', '/api/v3/process', { body: proc('three', ['a', 'b', 'c']) });
  t.equal(three.status, 400, 'three playout inputs, two ports: refused');
  t.match(JSON.stringify(three.body), exhausted);
  t.equal((await app.request('GET', '/api/v3/process/three')).status, 404, 'and not stored');

  // as in the reference, a process holds its ports from its add on, running or not
  t.equal((await app.request('POST', '/api/v3/process', { body: proc('two', ['a', 'b']) })).status, 200);
  const shown = (await app.request('GET', '/api/v3/process/two/state')).body.command as string[];
  t.same(shown.filter((a) => a.startsWith('tcp://') || a.startsWith('playout:')), [`tcp://127.0.0.1:${min}`, `tcp://127.0.0.1:${max}`],
    'state.command of a process never started shows its held ports, as the reference');
  const one = await app.request('POST', '/api/v3/process', { body: proc('one', ['a']) });
  t.equal(one.status, 400, 'the stopped process holds both ports');
  t.match(JSON.stringify(one.body), exhausted);
  const grow = await app.request('PUT', '/api/v3/process/two', { body: proc('two', ['a', 'b', 'c']) });
  t.equal(grow.status, 400, 'an update needing a third port is refused');
  t.match(JSON.stringify(grow.body), exhausted);
  t.equal((await app.request('GET', '/api/v3/process/two/config')).body.input.length, 2, 'the old config stays');
  // an update that keeps one input returns the other port
  t.equal((await app.request('PUT', '/api/v3/process/two', { body: proc('two', ['a']) })).status, 200);
  t.equal((await app.request('POST', '/api/v3/process', { body: proc('one', ['a']) })).status, 200, 'the returned port is taken');
  t.ok(((await app.request('GET', '/api/v3/process/one/state')).body.command as string[]).includes(`tcp://127.0.0.1:${max}`), 'shown in its command');
  t.equal((await app.request('DELETE', '/api/v3/process/two')).status, 200);
  t.equal((await app.request('POST', '/api/v3/process', { body: proc('again', ['x']) })).status, 200, 'a delete returns its port');
  // the start uses the held port: the lowest one went to 'again' after 'two' left it
  t.equal((await app.request('PUT', '/api/v3/process/again/command', { body: { command: 'start' } })).status, 200);
  const cmd = await waitFor(async () => {
    const c = (await app.request('GET', '/api/v3/process/again/state')).body.command as string[];
    return c.some((a) => a.startsWith('tcp://127.0.0.1:')) ? c : undefined;
  }, { what: 'the started command' });
  t.ok(cmd.includes(`tcp://127.0.0.1:${min}`), `the held port ${min} is used`);

  const ro = await startApp(t, { config: { api: { read_only: true }, playout: { enable: true, min_port: min, max_port: max } } });
  const w = await ro.request('PUT', '/api/v3/process/x/playout/in/stream', { raw: 'rtmp://a/b', headers: { 'content-type': 'text/plain' } });
  t.equal(w.status, 403, 'read-only: PUT stream refused');
  const f = await ro.request('POST', '/api/v3/process/x/playout/in/errorframe/a.png', { raw: Buffer.from([1, 2]) });
  t.equal(f.status, 403, 'read-only: POST errorframe refused');
  t.equal((await ro.request('GET', '/api/v3/process/x/playout/in/status')).status, 404, 'reads still answer');
});

/** True when nothing listens on 127.0.0.1:port. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => { s.destroy(); resolve(false); });
    s.once('error', () => resolve(true));
  });
}
