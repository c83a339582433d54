import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpegPids, NULL_OUT, VIDEO_IN } from './helpers.ts';

/*
 * Issue 11.3: an API token must not be able to write or truncate a file outside the disk folder,
 * whatever prefix, option or link it uses. Each attack is refused with 400 and the Error shape;
 * the legitimate forms next to each attack still pass.
 */

const OUTSIDE = '/tmp/procsafe-adversarial-must-not-exist';

t.test('every way out of the disk folder is refused with 400; legitimate outputs pass', async (t) => {
  const app = await startApp(t);
  const disk = join(app.dir, 'disk');
  mkdirSync(join(disk, 'sub'), { recursive: true });
  symlinkSync('/tmp', join(disk, 'link'));
  symlinkSync(`${OUTSIDE}.ts`, join(disk, 'file-link.ts'));
  let n = 0;
  const post = (output: unknown[], extra: Record<string, unknown> = {}) =>
    app.request('POST', '/api/v3/process', { body: { id: `p${n++}`, input: [VIDEO_IN], output, autostart: false, ...extra } });
  const out = (address: string, options: string[] = ['-f', 'mpegts']) => [{ id: 'out', address, options }];

  const attacks: [string, unknown[], Record<string, unknown>?][] = [
    ['tee: protocol', out(`tee:${OUTSIDE}.ts`)],
    ['tee: protocol, second output', out(`tee:{diskfs}/a.ts|${OUTSIDE}.ts`)],
    ['/dev/fd/.. climbs to /', out(`/dev/fd/../root${OUTSIDE}.ts`)],
    ['/proc/self/root', out(`/proc/self/root${OUTSIDE}.ts`)],
    ['/dev/shm', out('/dev/shm/x.ts')],
    ['file: with /dev/fd/..', out(`file:/dev/fd/../root${OUTSIDE}.ts`)],
    ['file name in output options', out('-', ['-f', 'mpegts', `${OUTSIDE}.ts`])],
    ['relative positional in output options', out('-', ['-f', 'mpegts', '../../x.ts'])],
    ['positional after a flag in output options', out('-', ['-y', `${OUTSIDE}.ts`])],
    ['positional in global options', out('{diskfs}/ok.ts'), { options: ['-f', 'mpegts', `${OUTSIDE}.ts`] }],
    ['positional in input options', [{ ...NULL_OUT }], { input: [{ ...VIDEO_IN, options: ['-re', `${OUTSIDE}.ts`, '-f', 'lavfi'] }] }],
    ['symlinked folder in the disk folder', out('{diskfs}/link/x.ts')],
    ['symlinked file in the disk folder', out('{diskfs}/file-link.ts')],
    ['.. after a symlinked folder', out('{diskfs}/link/../x.ts')],
    ['crypto+file', out(`crypto+file:${OUTSIDE}.ts`)],
    ['md5: writes its digest', out(`md5:${OUTSIDE}.ts`)],
    ['pipe:5', out('pipe:5')],
    ['pipe:1 (refused as in the reference; use -)', out('pipe:1')],
    ['fd:', out('fd:3')],
    ['unix socket', out(`unix:${OUTSIDE}.sock`)],
    ['unknown protocol', out('xyz:abc')],
    ['-hls_segment_filename outside', out('{diskfs}/x.m3u8', ['-f', 'hls', '-hls_segment_filename', `${OUTSIDE}_%d.ts`])],
    ['-master_pl_name climbing', out('{diskfs}/x.m3u8', ['-f', 'hls', '-master_pl_name', '../../../x.m3u8'])],
    ['-segment_list', out('{diskfs}/s_%d.ts', ['-f', 'segment', '-segment_list', `${OUTSIDE}.m3u8`])],
    ['-passlogfile', out('{diskfs}/x.ts', ['-passlogfile', OUTSIDE])],
    ['-x264-params stats outside', out('{diskfs}/x.ts', ['-c:v', 'libx264', '-x264-params', `pass=1:stats=${OUTSIDE}.log`])],
    ['-x264-params pass without stats (working directory)', out('{diskfs}/x.ts', ['-c:v', 'libx264', '-x264-params', 'pass=1'])],
    ['-x264opts stats relative (working directory)', out('{diskfs}/x.ts', ['-c:v', 'libx264', '-x264opts', 'pass=1:stats=x.log'])],
    ['-x265-params csv outside', out('{diskfs}/x.ts', ['-x265-params', `csv=${OUTSIDE}.csv`])],
    ['-pass without -passlogfile (working directory)', out('{diskfs}/x.ts', ['-c:v', 'libx264', '-pass', '1'])],
    ['-vstats_file in global options', out('{diskfs}/x.ts'), { options: ['-vstats_file', OUTSIDE] }],
    ['-progress to a file', out('{diskfs}/x.ts'), { options: ['-progress', `${OUTSIDE}.txt`] }],
    ['-report', out('{diskfs}/x.ts'), { options: ['-report'] }],
    ['-dump_attachment with its own name', out('{diskfs}/x.ts'), { input: [{ ...VIDEO_IN, options: ['-dump_attachment:t', '', '-f', 'lavfi'] }] }],
    ['-/option from a file', out('{diskfs}/x.ts', ['-/filter_complex', '/etc/hostname'])],
    ['-filter_complex_script', out('{diskfs}/x.ts'), { options: ['-filter_complex_script', '/etc/hostname'] }],
    ['tee muxer slave outside', out(`{diskfs}/a.ts|[f=mpegts]${OUTSIDE}.ts`, ['-f', 'tee', '-map', '0'])],
    ['tee muxer slave option', out(`[f=hls:hls_segment_filename=${OUTSIDE}_%d.ts]{diskfs}/a.m3u8`, ['-f', 'tee', '-map', '0'])],
    ['metadata filter writing a file', out('{diskfs}/x.ts', ['-vf', `metadata=mode=print:file=${OUTSIDE}.txt`])],
    ['metadata filter, name quoted', out('{diskfs}/x.ts', ['-vf', `'meta'data=mode=print:file=${OUTSIDE}.txt`])],
    ['metadata filter, quoted argument', out('{diskfs}/x.ts', ['-vf', "metadata=mode=print:file='{diskfs}/a:../../../../tmp/x'"])],
    ['psnr stats file', out('{diskfs}/x.ts'), { options: ['-filter_complex', `[0][0]psnr=stats_file=${OUTSIDE}.log`] }],
    ['lavfi input graph writing a file', [{ ...NULL_OUT }], { input: [{ id: 'in', address: `testsrc2,metadata=print:file=${OUTSIDE}.txt`, options: ['-f', 'lavfi'] }] }],
    ['ladspa loads a library', out('{diskfs}/x.ts', ['-af', 'ladspa=file=/tmp/evil.so'])],
  ];
  for (const [what, output, extra] of attacks) {
    const r = await post(output, extra);
    t.equal(r.status, 400, `${what}: 400 (${r.text.slice(0, 200)})`);
    t.match(r.body, { code: 400, message: String, details: [String] }, `${what}: the Error shape`);
  }
  t.notOk(existsSync(`${OUTSIDE}.ts`), 'nothing was written outside');

  const legit: [string, unknown[], Record<string, unknown>?][] = [
    ['HLS into {diskfs} with its own segment names', out('{diskfs}/x.m3u8', ['-f', 'hls', '-hls_segment_filename', '{diskfs}/x_%04d.ts', '-master_pl_name', 'main.m3u8'])],
    ['HLS into a subfolder of {diskfs}', out('{diskfs}/sub/x.m3u8', ['-f', 'hls', '-hls_segment_filename', '{diskfs}/sub/x_%04d.ts'])],
    ['HLS into {memfs} over http', out('{memfs}/x.m3u8', ['-f', 'hls', '-hls_segment_filename', '{memfs}/x_%04d.ts', '-method', 'PUT'])],
    ['rtmp', out('rtmp://127.0.0.1/live/x', ['-f', 'flv'])],
    ['-f null -', [{ ...NULL_OUT }]],
    ['/dev/null', out('/dev/null')],
    ['file: inside', out('file:{diskfs}/x.ts')],
    ['tee inside and udp', out('[onfail=ignore]{diskfs}/a.mkv|[f=mpegts]udp://127.0.0.1:1234', ['-f', 'tee', '-map', '0'])],
    ['filters without files', out('{diskfs}/x.ts', ['-vf', 'scale=80:-2,drawtext=text=a/b', '-metadata', 'title=/a/b', '-c:v', 'libx264'])],
    ['x264 2-pass statistics in {diskfs}', out('{diskfs}/x.ts', ['-c:v', 'libx264', '-x264-params', 'keyint=20:pass=1:stats={diskfs}/x264.log'])],
    ['-pass with -passlogfile in {diskfs}', out('{diskfs}/x.ts', ['-c:v', 'libx264', '-pass', '1', '-passlogfile', '{diskfs}/pass'])],
    ['flags before an output option', out('{diskfs}/x.ts', ['-y', '-an', '-nostdin', '-f', 'mpegts'])],
  ];
  for (const [what, output, extra] of legit) {
    const r = await post(output, extra);
    t.equal(r.status, 200, `${what}: accepted (${r.text.slice(0, 200)})`);
  }
});

t.test('a symlink placed after the add is caught at the next start', async (t) => {
  const app = await startApp(t);
  const disk = join(app.dir, 'disk');
  const body = { id: 'late', input: [VIDEO_IN], output: [{ id: 'out', address: '{diskfs}/late/x.ts', options: ['-f', 'mpegts'] }], autostart: false };
  t.equal((await app.request('POST', '/api/v3/process', { body })).status, 200);
  symlinkSync('/tmp', join(disk, 'late'));
  t.equal((await app.request('PUT', '/api/v3/process/late/command', { body: { command: 'start' } })).status, 200);
  // the definition is resolved again before the spawn: the link is found and nothing runs
  const rep = await waitFor(async () => {
    const r = (await app.request('GET', '/api/v3/process/late/report')).body;
    return r.log.length > 0 ? r : undefined;
  }, { what: 'the refusal in the report' });
  t.match(rep.log.map((e: string[]) => e[1]).join('\n'), /is not inside of .*\(it resolves to \/tmp\/x\.ts\)/);
  t.not((await app.request('GET', '/api/v3/process/late/state')).body.exec, 'running');
  t.same(ffmpegPids(join(disk, 'late')), [], 'no ffmpeg writes through the link');
});
