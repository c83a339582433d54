import t from 'tap';
import { spawn } from 'node:child_process';
import { publisherArgs, startIngest, until } from './helpers.ts';

/**
 * End to end with real ffmpeg: one pushes a light stream with `-method PUT`, the process engine
 * runs another that reads `{httpts,name=cam}` and writes HLS into memfs.
 */
t.test('a process reads a pushed stream through {httpts,name=..}', async (t) => {
  const kit = await startIngest(t, {}, ['memfs'], { storage: { memory: { auth: { enable: false } } } });
  const base = await kit.listen();
  const pub = spawn('ffmpeg', publisherArgs(`${base}/ingest/ts/cam`), { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  pub.stderr.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-2000); });
  t.teardown(() => { pub.kill('SIGKILL'); });
  await until(`the publisher to be live (${stderr})`, async () => ((await kit.request('GET', '/api/v3/httpts')).body as unknown[]).length === 1);

  const add = await kit.request('POST', '/api/v3/process', {
    body: {
      id: 'reader',
      input: [{ id: 'in', address: '{httpts,name=cam}', options: ['-f', 'mpegts'] }],
      output: [{ id: 'out', address: '{memfs}/cam.m3u8', options: ['-c', 'copy', '-f', 'hls', '-hls_time', '1', '-hls_list_size', '3', '-method', 'PUT'] }],
      autostart: true,
    },
  });
  t.equal(add.status, 200, add.text);
  const playlist = await until('the HLS playlist in memfs', async () => {
    // through the API: the public route hands players a session playlist (sessions plugin)
    const r = await kit.request('GET', '/api/v3/fs/mem/cam.m3u8');
    return r.status === 200 && r.text.includes('.ts') && r.text;
  });
  t.match(playlist, /#EXTM3U/);
  const live = (await kit.request('GET', '/api/v3/httpts')).body[0];
  t.equal(live.readers, 1, 'the process is the stream\'s reader');
});
