import t from 'tap';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg, srtCaller, srtUrl, startSrtApp, SOURCE, TOKEN, PASS } from './srt-helpers.ts';

t.test('publish with token and passphrase, list it, pull it back and decode frames', async (t) => {
  const app = await startSrtApp(t);
  const pub = ffmpeg(t, [...SOURCE, '-f', 'mpegts', srtUrl(app.srtPort, `live,mode:publish,token:${TOKEN}`, `&passphrase=${PASS}&pbkeylen=32`)]);
  const listed = await waitFor(async () => {
    const r = await app.request('GET', '/api/v3/srt');
    return r.body?.publisher?.live !== undefined && r.body;
  }, { timeout: 30_000, what: `publisher listed (${pub.stderr})` });
  t.same(Object.keys(listed), ['publisher', 'subscriber', 'connections', 'log']);
  const pubId = listed.publisher.live;
  await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body.connections[pubId].stats.recv_bytes > 0, { what: 'bytes received' });

  const out = join(app.dir, 'pulled.txt');
  const play = ffmpeg(t, ['-i', srtUrl(app.srtPort, `live,token:${encodeURIComponent(TOKEN)}`), '-frames:v', '5', '-f', 'framemd5', out]);
  await play.done;
  t.equal(play.code, 0, `player decoded (${play.stderr})`);
  const frames = (await readFile(out, 'utf8')).split('\n').filter((l) => /^0,/.test(l));
  t.equal(frames.length, 5, 'five decoded video frames');
  t.notMatch(play.stderr, /non-existing PPS|no frame/, 'the subscriber started at a keyframe');
});

t.test('bad token, wrong passphrase, unknown stream and a second publisher are refused', async (t) => {
  const app = await startSrtApp(t, { log: { enable: true, topics: [] } });
  const bad = ffmpeg(t, [...SOURCE, '-t', '2', '-f', 'mpegts', srtUrl(app.srtPort, 'x,mode:publish,token:WRONG')]);
  await bad.done;
  t.not(bad.code, 0, 'bad token refused');
  t.throws(() => srtCaller(app.srtPort, 'x,mode:publish,token:WRONG'), { reject: 1401 } as never, 'rejected in the handshake as unauthorized');
  t.throws(() => srtCaller(app.srtPort, `x,mode:publish,token:${TOKEN}`, 'not-the-passphrase'), 'wrong passphrase refused');
  t.throws(() => srtCaller(app.srtPort, `nothing,token:${TOKEN}`), { reject: 1404 } as never, 'request for an unknown stream refused');

  const first = srtCaller(app.srtPort, `one,mode:publish,token:${TOKEN}`);
  t.teardown(() => first.stop());
  await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body.publisher.one !== undefined, { what: 'first publisher' });
  t.throws(() => srtCaller(app.srtPort, `one,mode:publish,token:${TOKEN}`), { reject: 1409 } as never, 'second publisher refused (conflict)');

  const lines = await waitFor(async () => {
    const log = (await app.request('GET', '/api/v3/log?format=raw')).body as { message: string; reason?: string; stream?: string }[];
    const refused = log.filter((l) => l.message === 'SRT connection refused in the handshake');
    return refused.some((l) => l.reason?.startsWith('conflict')) ? refused : undefined;
  }, { what: 'refusal log lines' });
  t.same([...new Set(lines.map((l) => l.reason))].sort(),
    ['badSecret: wrong passphrase', 'conflict: already publishing', 'notFound: nothing publishes this stream', 'unauthorized: wrong token'],
    'each refusal logged with its reason, the wrong passphrase too');
  t.ok(lines.some((l) => l.stream === 'nothing'), 'with the stream name');
  t.notMatch(JSON.stringify(lines), /WRONG|tok,en/, 'never the token');

  const listed = (await app.request('GET', '/api/v3/srt')).body;
  t.match(listed.log['handshake:reject'].map((e: { msg: string[] }) => e.msg[0]), ['unauthorized: wrong token: x from 127.0.0.1:', 'unauthorized: wrong token: x', 'badSecret: wrong passphrase: x', 'notFound: nothing', 'conflict: already publishing: one'],
    'srt.log: refusals in the global log');
  const conn = listed.connections[String(listed.publisher.one)];
  t.match(conn.log['connection:new'][0], { ts: Number, msg: [/^publish one from 127\.0\.0\.1:\d+$/] }, 'and each connection its own');
});

t.test('publisher gone: subscribers end; 10 subscribers at once get identical bytes', async (t) => {
  const app = await startSrtApp(t);
  const pub = ffmpeg(t, [...SOURCE, '-f', 'mpegts', srtUrl(app.srtPort, `fan,mode:publish,token:${TOKEN}`)]);
  await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body.publisher.fan !== undefined, { timeout: 30_000, what: 'publisher' });
  const subs = Array.from({ length: 10 }, () => srtCaller(app.srtPort, `fan,token:${TOKEN}`));
  t.teardown(() => subs.forEach((s) => s.stop()));
  await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body.subscriber.fan?.length === 10, { what: '10 subscribers listed' });
  await waitFor(() => subs.every((s) => s.bytes.reduce((n, b) => n + b.length, 0) > 50_000), { timeout: 30_000, what: 'every subscriber has media' });
  pub.kill();
  const why = await Promise.all(subs.map((s) => s.closed));
  t.equal(why.length, 10, 'every subscriber was closed when the publisher went');
  const streams = subs.map((s) => Buffer.concat(s.bytes));
  const longest = streams.reduce((a, b) => (b.length > a.length ? b : a));
  for (const s of streams) {
    t.equal(s[0], 0x47, 'starts on a TS packet');
    t.ok(longest.subarray(longest.length - s.length).equals(s), 'same bytes as the others (a suffix of the longest)');
  }
  await waitFor(async () => Object.keys((await app.request('GET', '/api/v3/srt')).body.publisher).length === 0, { what: 'stream gone from the list' });
});
