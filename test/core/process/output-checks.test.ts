import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { VIDEO_IN } from './helpers.ts';

/*
 * What the API checks of an output (reference 8.4) and nothing more: the reference's clear 400s
 * stay, and what the reference accepts is accepted, options, escapes and quotes included; where a
 * child can really write is the confinement's business (confine/writes.test.ts).
 */

t.test('the reference\'s refusals: 400 with the Error shape', async (t) => {
  const app = await startApp(t);
  let n = 0;
  const post = (address: string, options: string[] = ['-f', 'mpegts']) =>
    app.request('POST', '/api/v3/process', { body: { id: `r${n++}`, input: [VIDEO_IN], output: [{ id: 'out', address, options }], autostart: false } });
  for (const address of [
    '/etc/passwd', `${app.dir}/disk/../../etc/passwd`, 'file:/etc/passwd', '{diskfs}/ok.ts|/etc/passwd',
    '[f=mpegts]{diskfs}/a.ts|[f=mpegts]/tmp/x.ts', 'relative/x.ts', 'pipe:1', 'http://exa mple.com/x',
  ]) {
    const r = await post(address);
    t.equal(r.status, 400, `${address}: 400`);
    t.match(r.body, { code: 400, message: String, details: [String] }, `${address}: the Error shape`);
  }
  t.match((await post('/etc/passwd')).body.details[0], /\/etc\/passwd is not inside of /);
});

t.test('what the reference accepts is accepted: escapes, quotes and file options included', async (t) => {
  const app = await startApp(t, { config: { encoder: { access: { output: { block: ['^rtmp://blocked'] } } } } });
  let n = 0;
  const post = (address: string, options: string[] = ['-f', 'mpegts']) =>
    app.request('POST', '/api/v3/process', { body: { id: `a${n++}`, input: [VIDEO_IN], output: [{ id: 'out', address, options }], autostart: false } });
  const accepted: [string, string, string[]?][] = [
    ['restreamer-ui tee: HLS with an escaped {memfs^:} segment name, RTMP and SRT',
      '[f=hls:start_number=0:hls_time=2:hls_list_size=6:hls_flags=append_list+delete_segments:hls_segment_filename={memfs^:}/{processid}_%04d.ts:method=PUT]{memfs}/{processid}.m3u8|[f=flv]rtmp://127.0.0.1:1935/{processid}.stream|[f=mpegts]srt://127.0.0.1:6000?mode=caller&streamid={processid},mode:publish',
      ['-f', 'tee', '-map', '0']],
    ['quotes in tee options', "[f=hls:hls_base_url='a b']{diskfs}/q.m3u8", ['-f', 'tee', '-map', '0']],
    ['HLS with its own segment names', '{diskfs}/x.m3u8', ['-f', 'hls', '-hls_segment_filename', '{diskfs}/x_%04d.ts']],
    ['a filter with a file', '{diskfs}/f.ts', ['-vf', "metadata=mode=print:file='{diskfs}/m.txt'"]],
    ['/dev/null', '/dev/null'],
    ['stdout', '-', ['-f', 'null']],
    ['file: inside', 'file:{diskfs}/x.ts'],
    ['udp in a tee', '[onfail=ignore]{diskfs}/a.mkv|[f=mpegts]udp://127.0.0.1:1234', ['-f', 'tee', '-map', '0']],
  ];
  for (const [what, address, options] of accepted) {
    const r = await post(address, options);
    t.equal(r.status, 200, `${what}: accepted (${r.text.slice(0, 160)})`);
  }
  const blocked = await post('rtmp://blocked.example/live/x', ['-f', 'flv']);
  t.equal(blocked.status, 400, 'encoder.access.output still decides');
  t.match(blocked.body.details[0], /address is not allowed/);
});

t.test('encoder.access patterns are RE2 and linear: a nested repeat holds nothing, a backreference is refused', async (t) => {
  const app = await startApp(t, { config: { encoder: { access: { output: { block: ['^rtmp://blocked', '(a+)+$'] } } } } });
  const post = (id: string, address: string) => app.request('POST', '/api/v3/process', { body: { id, input: [VIDEO_IN], output: [{ id: 'out', address, options: ['-f', 'flv'] }], autostart: false } });
  // a backtracking RegExp takes 2^40 steps on this address (the main thread held for good)
  const r = await post('ok', `rtmp://example.com/${'a'.repeat(40)}b`);
  t.equal(r.status, 200, 'answered, and not blocked (it does not end in a)');
  t.equal((await post('blocked', `rtmp://example.com/${'a'.repeat(40)}`)).status, 400, 'blocked where it matches');
  const config = (await app.request('GET', '/api/v3/config')).body.config;
  for (const k of ['encoder', 'ffmpeg']) if (config[k]) config[k].access.input.block = ['(a)\\1'];
  const put = await app.request('PUT', '/api/v3/config', { body: config });
  t.equal(put.status, 409, 'a backreference (no RE2) is refused at the PUT (the reference\'s ConfigError)');
  t.match(put.body, { 'encoder.access.input.block': [/not a valid regular expression/] });
});
