import t from 'tap';
import { spawn } from 'node:child_process';
import { request, type TestLike } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { chunk, linesOf, putHead, raw, startIngestCli, tsSample, unlisted, type IngestCli, type Raw } from './helpers.ts';

/*
 * The fault boundary of the http-ts-ingest example (issue 27.1), against the service as its own
 * OS process: a publisher whose connection breaks in any way ends its own stream, with one log
 * line naming its address and the reason; the service, its API, another publisher with its
 * reading process, and an unrelated process run on.
 */

const sample = await tsSample();

/** A real ffmpeg publishing `name` live, and a process reading it through the placeholder. */
async function legitimate(t: Tap, app: IngestCli, name: string): Promise<void> {
  const pub = spawn('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=15',
    '-t', '300', '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '15', '-f', 'mpegts', '-method', 'PUT',
    `${app.url}/ingest/ts/${name}`], { stdio: 'ignore' });
  const gone = new Promise((r) => pub.once('close', r));
  t.teardown(async () => { if (pub.exitCode === null && pub.signalCode === null) { pub.kill('SIGKILL'); await gone; } });
  await waitFor(async () => (await app.live()).some((s) => s.name === name), { what: `${name} live` });
  const body = {
    id: 'reader', autostart: true, reconnect: false,
    input: [{ id: 'in', address: `{httpts,name=${name}}`, options: ['-f', 'mpegts'] }],
    output: [{ id: 'out', address: '-', options: ['-c', 'copy', '-f', 'null'] }],
  };
  t.equal((await request(app.url, 'POST', '/api/v3/process', { body })).status, 200, 'the reading process is added');
  await waitFor(async () => (await app.live()).find((s) => s.name === name)?.readers === 1, { what: 'the process reading' });
}

/** What the helpers here use of a tap test. */
interface Tap extends TestLike { equal(a: unknown, b: unknown, msg: string): unknown }

interface Breakage {
  name: string;
  /** Breaks the connection after its head and one chunk went out. */
  breakIt(c: Raw): void;
  /** The reason the log line gives. */
  reason: string;
}

const BREAKAGES: Breakage[] = [
  { name: 'reset', breakIt: (c) => c.socket.resetAndDestroy(), reason: 'httpts connection closed: the stream broke off: aborted' },
  { name: 'malformed-chunk', breakIt: (c) => c.socket.write('zz\r\nnot a chunk\r\n'), reason: 'httpts connection closed: the stream broke off' },
  { name: 'half-closed', breakIt: (c) => c.socket.end(), reason: 'httpts connection closed: the stream broke off' },
  { name: 'garbage-size', breakIt: (c) => c.socket.write('ffffffffffffffffffff\r\n'), reason: 'httpts connection closed: the stream broke off' },
  { name: 'idle', breakIt: () => {}, reason: 'httpts connection closed: no byte of the stream arrived within http.body_timeout_seconds' },
];

t.test('a publisher connection that breaks ends its own stream with one log line; everything else runs on', async (t) => {
  const app = await startIngestCli(t, {}, { http: { threads: 0, body_timeout_seconds: 2 } });
  const keep = { id: 'keep', autostart: true, input: [{ id: 'in', address: 'testsrc2=size=64x48:rate=5', options: ['-re', '-f', 'lavfi'] }], output: [{ id: 'out', address: '-', options: ['-f', 'null'] }] };
  t.equal((await request(app.url, 'POST', '/api/v3/process', { body: keep })).status, 200);
  await legitimate(t, app, 'legit');

  const remotes = new Map<string, string>();
  for (const b of BREAKAGES) {
    const c = await raw(t, app.port);
    remotes.set(b.name, c.remote);
    c.socket.write(putHead(b.name));
    c.socket.write(chunk(sample.subarray(0, 188 * 20)));
    await waitFor(async () => (await app.live()).some((s) => s.name === b.name), { what: `${b.name} live` });
    b.breakIt(c);
    await unlisted(app, b.name);
    await Promise.race([c.closed, new Promise((r) => setTimeout(r, 10_000))]);
    t.ok(c.isClosed(), `${b.name}: its connection is closed`);
    t.equal(app.child.exitCode, null, `${b.name}: the service lives`);
  }

  const before = (await app.live()).find((s) => s.name === 'legit')!.bytes_rx;
  await waitFor(async () => ((await app.live()).find((s) => s.name === 'legit')?.bytes_rx ?? 0) > before + 10_000, { what: 'the legitimate publisher going on' });
  t.equal((await app.live()).find((s) => s.name === 'legit')?.readers, 1, 'its reading process still reads');
  for (const id of ['keep', 'reader']) {
    t.equal((await request(app.url, 'GET', `/api/v3/process/${id}/state`)).body.exec, 'running', `process ${id} runs`);
  }
  const log = await app.log();
  for (const b of BREAKAGES) {
    t.equal(linesOf(log, remotes.get(b.name)!, 'httpts connection').length, 1, `${b.name}: one log line naming ${remotes.get(b.name)}`);
    t.equal(linesOf(log, remotes.get(b.name)!, b.reason).length, 1, `${b.name}: the reason: ${b.reason}`);
  }
  t.same(log.filter((l) => l.includes('unexpected error')), [], 'nothing reached the generic error handler');
});

t.test('a reader that stops reading is cut with a log line; the publisher and another reader go on', async (t) => {
  // pinned: the log lines name the client's port, which main does not see through a serving thread's hop
  const app = await startIngestCli(t, {}, { http: { threads: 0 } });
  const pub = await raw(t, app.port);
  pub.socket.write(putHead('fast'));
  pub.socket.write(chunk(sample.subarray(0, 188 * 20)));
  await waitFor(async () => (await app.live()).some((s) => s.name === 'fast'), { what: 'fast live' });
  const key = await readKey(t, app, 'fast');
  const slow = await raw(t, app.port, { read: false });
  const good = await raw(t, app.port);
  for (const r of [slow, good]) r.socket.write(`GET /ingest/ts/fast?key=${key} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  await waitFor(async () => (await app.live())[0]?.readers === 2, { what: 'both readers attached' });

  // bursts below reader_buffer_kbytes (2 MiB), each read by the good reader before the next: the
  // slow one's kernel buffers fill, then its queue, and it is cut
  const cut = () => app.log().then((log) => linesOf(log, slow.remote, 'httpts connection closed: the reader is more than 2048 KiB behind'));
  let sent = 0;
  const deadline = Date.now() + 90_000;
  while ((await cut()).length === 0 && Date.now() < deadline) {
    for (let i = 0; i < 10; i++) { pub.socket.write(chunk(sample)); sent += sample.length; }
    await waitFor(() => good.bytes() >= sent, { what: 'the good reader keeping up' });
  }
  t.equal((await cut()).length, 1, `one log line naming the slow reader ${slow.remote}`);
  slow.socket.resume(); // a paused socket does not see its reset
  await waitFor(() => slow.isClosed(), { what: 'the slow reader\'s connection closed' });
  t.ok(slow.bytes() < sent, 'it got less than was sent');
  for (let i = 0; i < 10; i++) { pub.socket.write(chunk(sample)); sent += sample.length; }
  await waitFor(() => good.bytes() >= sent, { what: 'the good reader still receiving' });
  t.same((await app.live()).map((s) => [s.name, s.readers]), [['fast', 1]], 'the stream lives on with the other reader');
  t.equal(app.child.exitCode, null, 'the service lives');
});

/** The `{httpts}` read key, from the command of a process that reads `name`. */
async function readKey(t: Tap, app: IngestCli, name: string): Promise<string> {
  const body = {
    id: 'key', autostart: true, input: [{ id: 'in', address: `{httpts,name=${name}}`, options: ['-f', 'mpegts'] }],
    output: [{ id: 'out', address: '-', options: ['-c', 'copy', '-f', 'null'] }],
  };
  t.equal((await request(app.url, 'POST', '/api/v3/process', { body })).status, 200, 'the key process is added');
  const key = await waitFor(async () => {
    const cmd = (await request(app.url, 'GET', '/api/v3/process/key/state')).body.command as string[] | undefined;
    return cmd?.map((a) => /[?&]key=([0-9a-f]+)/.exec(a)?.[1]).find((k) => k);
  }, { what: 'the read key in the process command' });
  // it only told the key: gone before the test's own readers come
  t.equal((await request(app.url, 'DELETE', '/api/v3/process/key')).status, 200, 'the key process is deleted');
  await waitFor(async () => (await app.live()).find((s) => s.name === name)?.readers === 0, { what: 'the key process gone' });
  return key;
}

t.test('odd and malformed requests are answered 4xx, refusals logged with the remote; the service lives', async (t) => {
  // pinned as above (the refusals' log lines name the client's port)
  const app = await startIngestCli(t, { token: 's3cret' }, { http: { threads: 0 } });
  const cases: { name: string; head: string; status: number; logged?: string }[] = [
    { name: 'no token', head: putHead('a'), status: 401, logged: 'httpts publish refused: invalid or missing token' },
    { name: 'bad name', head: putHead('bad%20name'), status: 400, logged: 'httpts publish refused: invalid stream name' },
    { name: 'no key', head: 'GET /ingest/ts/a HTTP/1.1\r\nHost: x\r\n\r\n', status: 403, logged: 'httpts play refused: reading needs the key' },
    { name: 'odd type, expect', head: putHead('b?token=s3cret', 'Content-Type: ;;;=\r\nExpect: 100-continue\r\n'), status: 200 },
    { name: 'length and chunked', head: 'PUT /ingest/ts/c HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n', status: 400 },
    { name: 'huge header', head: `PUT /ingest/ts/d HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(2 * 1024 * 1024)}\r\n\r\n`, status: 431 },
  ];
  for (const k of cases) {
    const c = await raw(t, app.port);
    c.socket.write(k.head);
    if (k.status === 200) c.socket.end(`${chunk(Buffer.alloc(188, 0x47)).toString('latin1')}0\r\n\r\n`, 'latin1');
    await waitFor(() => /^HTTP\/1\.1 (\d+)/m.exec(c.received().replace(/^HTTP\/1\.1 100 [^\n]*\n\r\n/, ''))?.[1], { what: `${k.name}: an answer` });
    const status = Number(/^HTTP\/1\.1 (\d+)/.exec(c.received().replace(/^HTTP\/1\.1 100 [^\n]*\n\r\n/, ''))![1]);
    t.equal(status, k.status, `${k.name}: ${k.status}`);
    if (k.logged) t.equal(linesOf(await app.log(), c.remote, k.logged).length, 1, `${k.name}: one log line naming ${c.remote}`);
    c.socket.destroy();
  }
  t.equal(app.child.exitCode, null, 'the service lives');
  t.equal((await request(app.url, 'GET', '/api/v3/httpts')).status, 200, 'the API answers');
});
