import t from 'tap';
import { spawn } from 'node:child_process';
import { MEM_PASS, MEM_USER, startFs, rawRequest } from './fs-helpers.ts';
import type { TestLike } from '../../helpers/app.ts';
import { runUrl } from '../../helpers/run-url.ts';

const FFMPEG = '/usr/bin/ffmpeg';

/** Runs ffmpeg to completion (killed at the deadline); resolves with its exit code and stderr tail. */
function ffmpeg(t: TestLike, args: string[], timeoutMs = 40_000): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(FFMPEG, ['-hide_banner', '-nostdin', '-loglevel', 'warning', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-4000); });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    t.teardown(() => { clearTimeout(timer); child.kill('SIGKILL'); });
    child.on('error', reject);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stderr }); });
  });
}

const source = ['-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10', '-t', '3',
  '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '10', '-pix_fmt', 'yuv420p'];

t.test('ffmpeg writes HLS into memfs with PUT through {memfs} (basic auth in the URL)', async (t) => {
  const app = await startFs(t);
  const url = runUrl(t, app, 'memfs', '/live/x.m3u8');
  t.match(url, /^http:\/\/process:p:[A-Za-z0-9_-]{32}@127\.0\.0\.1:\d+\/memfs\/live\/x\.m3u8$/, 'the run\'s credential');
  t.notOk(url.includes(encodeURIComponent(MEM_PASS)) || url.includes(`${MEM_USER}:`), 'not storage.memory.auth\'s');

  const run = await ffmpeg(t, [...source, '-f', 'hls', '-hls_time', '1', '-hls_list_size', '0', '-method', 'PUT', url]);
  t.equal(run.code, 0, `ffmpeg exit (${run.stderr})`);

  const playlist = await rawRequest(app.url, 'GET', '/memfs/live/x.m3u8');
  t.equal(playlist.status, 200);
  t.equal(playlist.headers['content-type'], 'application/vnd.apple.mpegurl');
  t.match(playlist.text, /^#EXTM3U/);
  t.match(playlist.text, /#EXT-X-ENDLIST/);
  const segments = playlist.text.split('\n').filter((l) => l && !l.startsWith('#'));
  t.ok(segments.length >= 2, `several segments (${segments.join(', ')})`);
  for (const s of segments) {
    const r = await rawRequest(app.url, 'GET', `/memfs/live/${s}`);
    t.equal(r.status, 200, s);
    t.equal(r.headers['content-type'], 'video/MP2T');
    t.equal(r.body[0], 0x47, `${s} is MPEG-TS (sync byte)`);
  }
  const list = await app.request('GET', '/api/v3/fs/mem?glob=/live/*&sort=name');
  t.equal(list.status, 200);
  const names = list.body.map((f: any) => f.name);
  t.ok(names.includes('/live/x.m3u8'));
  for (const s of segments) t.ok(names.includes(`/live/${s}`), `${s} is listed`);
  t.ok(list.body.every((f: any) => f.size_bytes > 0));
});

t.test('ffmpeg deletes old segments with DELETE (delete_segments)', async (t) => {
  const app = await startFs(t);
  const run = await ffmpeg(t, [...source.map((a) => (a === '3' ? '5' : a)), '-f', 'hls', '-hls_time', '1', '-hls_list_size', '2',
    '-hls_flags', 'delete_segments', '-method', 'PUT', runUrl(t, app, 'memfs', '/d/y.m3u8')]);
  t.equal(run.code, 0, `ffmpeg exit (${run.stderr})`);
  const playlist = await rawRequest(app.url, 'GET', '/memfs/d/y.m3u8');
  const segments = playlist.text.split('\n').filter((l) => l && !l.startsWith('#'));
  const list = await app.request('GET', '/api/v3/fs/mem?glob=/d/*.ts');
  const names: string[] = list.body.map((f: any) => f.name);
  for (const s of segments) t.ok(names.includes(`/d/${s}`), `${s} of the playlist is there`);
  t.notOk(names.includes('/d/y0.ts'), `the first segment was deleted (left: ${names.join(', ')})`);
});

t.test('ffmpeg with wrong credentials: a refused PUT is no broken pipe, and the 401 is reported when ffmpeg reads it', async (t) => {
  const app = await startFs(t);
  const url = `http://${MEM_USER}:wrong@${new URL(app.url).host}/memfs/refused.ts`;
  // about 8 MiB in one PUT: far more than the socket buffers hold, so the server answers 401
  // while ffmpeg is still sending
  const big = ['-f', 'lavfi', '-i', 'testsrc2=size=640x480:rate=25', '-t', '3', '-c:v', 'mpeg2video', '-b:v', '20M', '-f', 'mpegts', '-method', 'PUT'];
  // ffmpeg's first PUT carries `Expect: 100-continue` and gets the 401 challenge; its retry with
  // the (wrong) credentials is sent blind: ffmpeg never reads that answer, so the point is that
  // the server takes the body and lets ffmpeg finish instead of resetting it mid-stream
  const blind = await ffmpeg(t, [...big, url]);
  t.notMatch(blind.stderr, /Broken pipe|Connection reset/i, 'no broken pipe');
  t.equal(blind.code, 0, blind.stderr);
  // with every PUT asking for 100-continue ffmpeg reads the refusal and reports it
  const asked = await ffmpeg(t, [...big, '-send_expect_100', '1', url]);
  t.match(asked.stderr, /401 Unauthorized/);
  t.not(asked.code, 0);
  t.same((await app.request('GET', '/api/v3/fs/mem')).body, [], 'nothing was stored');
});
