import t from 'tap';
import { preauthOutput, preauthorize, runMask } from '../../../core/process/preauth.ts';
import { runUserinfo, type PlaceholderRun } from '../../../sdk/index.ts';

/*
 * Issue 46.1, the pure part: which outputs get the run's Basic credential as a header of ffmpeg's
 * HLS muxer (so each upload is one request, not a 401 and a second request), and which are left
 * exactly as the operator wrote them. The real ffmpeg side is preauth-ffmpeg.test.ts.
 */

const run: PlaceholderRun = { processId: 'cam:1', token: 'A'.repeat(30) + '_-' };
const own = `http://${runUserinfo(run)}127.0.0.1:8080`;
const header = `Authorization: Basic ${Buffer.from(`process:cam:1:${run.token}`).toString('base64')}\r\n`;
const bare = 'http://127.0.0.1:8080';
const out = (address: string, options: string[] = []) => ({ id: 'o', address, options, cleanup: [] });

t.test('an HLS output into the run\'s own origin gets -headers with the credential ffmpeg would send after a 401, and its URLs lose it', async (t) => {
  const hls = out(`${own}/memfs/cam.m3u8`, ['-f', 'hls', '-hls_segment_filename', `${own}/memfs/cam_%04d.ts`, '-method', 'PUT']);
  const got = preauthOutput(hls, run);
  t.same(got.options, ['-f', 'hls', '-hls_segment_filename', `${bare}/memfs/cam_%04d.ts`, '-method', 'PUT', '-headers', header], 'last, right before the address');
  t.equal(got.address, `${bare}/memfs/cam.m3u8`, 'no credential in the URL: ffmpeg asks no 100-continue');
  t.equal(Buffer.from(/Basic (\S+)/.exec(header)![1]!, 'base64').toString(), `process:cam:1:${run.token}`, 'the id decoded, as ffmpeg sends it');
  t.same(hls.options.length, 6, 'the resolved output is not touched (the run\'s scope is read from it)');
  t.equal(hls.address, `${own}/memfs/cam.m3u8`);
  t.same(preauthOutput(out(`${own}/memfs/x.m3u8`, ['-method', 'PUT']), run).options, ['-method', 'PUT', '-headers', header], 'no -f: .m3u8 is HLS');
  t.same(preauthOutput(out(`${own}/memfs/x.m3u8?a=1`), run).options, ['-headers', header]);
  const https = preauthOutput(out(`${own.replace('http:', 'https:')}/memfs/x.m3u8`, ['-f', 'hls']), run);
  t.same([https.options.length, https.address], [4, 'https://127.0.0.1:8080/memfs/x.m3u8'], 'https too');
});

t.test('left as written: other muxers, an own -headers, another origin or credential, no run', async (t) => {
  const same = (o: ReturnType<typeof out>, why: string) => t.equal(preauthOutput(o, run), o, why);
  for (const f of ['mpegts', 'image2', 'dash', 'segment', 'flv', 'null', 'hlsx']) same(out(`${own}/memfs/x.m3u8`, ['-f', f]), `-f ${f}`);
  same(out(`${own}/memfs/snap.jpg`), 'no -f and not a playlist');
  same(out(`${own}/memfs/x.m3u8`, ['-f', 'hls', '-headers', 'X-A: b\r\n']), 'the operator\'s own -headers');
  // the key file's contents name where the muxer reads the key, with the muxer's headers: a server the command does not show
  same(out(`${own}/memfs/x.m3u8`, ['-f', 'hls', '-hls_key_info_file', '/data/disk/keyinfo']), 'a key info file');
  same(out(`${own}/memfs/x.m3u8`, ['-f', 'hls', '-hls_segment_filename', 'http://cdn.example:80/seg_%d.ts']), 'a segment URL elsewhere');
  same(out(`${own}/memfs/x.m3u8`, ['-f', 'hls', '-hls_segment_filename', `${own.replace('8080', '8081')}/seg_%d.ts`]), 'another port');
  same(out(`http://${runUserinfo({ processId: 'other', token: run.token })}127.0.0.1:8080/memfs/x.m3u8`, ['-f', 'hls']), 'another run\'s userinfo');
  same(out('http://admin:pw@127.0.0.1:8080/memfs/x.m3u8', ['-f', 'hls']), 'an operator\'s credential');
  same(out('http://127.0.0.1:8080/memfs/x.m3u8', ['-f', 'hls']), 'no credential');
  same(out(`rtmp://h/app/${runUserinfo(run)}x.m3u8`, ['-f', 'hls']), 'not HTTP');
  same(out(`file:${own}/memfs/x.m3u8`, ['-f', 'hls']), 'the credential not at the start');
  const list = [out(`${own}/memfs/x.m3u8`, ['-f', 'hls'])];
  t.equal(preauthorize(list, undefined), list, 'a command shown for no run gets nothing');
  t.same(preauthorize(list, run)[0]!.options, ['-f', 'hls', '-headers', header], 'the run\'s command does');
  t.same(list[0]!.options, ['-f', 'hls'], 'in a copy');
});

t.test('restreamer-ui\'s tee: its HLS slave gets headers= first in its options, escaped for both of the tee\'s levels', async (t) => {
  const esc = own.replace(/:/g, '\\\\:');
  const hlsSlave = `[f=hls:hls_time=2:hls_segment_filename=${esc}/memfs/cam_%04d.ts:method=PUT]${own}/memfs/cam.m3u8`;
  const tee = out(`${hlsSlave}|[f=flv]rtmp://127.0.0.1/live/cam|[f=mpegts]srt://127.0.0.1:6000`, ['-f', 'tee']);
  const got = preauthOutput(tee, run);
  const [first, ...rest] = got.address.split('|');
  t.same(rest, ['[f=flv]rtmp://127.0.0.1/live/cam', '[f=mpegts]srt://127.0.0.1:6000'], 'the other slaves as they were');
  const bareEsc = bare.replace(/:/g, '\\\\:');
  t.equal(first, `[headers=${header.replace(/[:\r\n]/g, '\\\\$&')}:f=hls:hls_time=2:hls_segment_filename=${bareEsc}/memfs/cam_%04d.ts:method=PUT]${bare}/memfs/cam.m3u8`,
    'the header first, escaped twice; the credential gone from its URLs (escaped or not)');
  t.same(got.options, ['-f', 'tee'], 'no -headers for the tee muxer itself (it has no such option)');
  const same = (address: string, why: string) => t.equal(preauthOutput(out(address, ['-f', 'tee']), run).address, address, why);
  same(`[f=hls:headers=X-A\\\\: b]${own}/memfs/cam.m3u8`, 'the operator\'s own headers=');
  same(`[f=hls:hls_key_info_file=/data/disk/keyinfo]${own}/memfs/cam.m3u8`, 'a key info file');
  same(`[f=hls:hls_segment_filename=http\\\\://cdn\\\\:80/s_%d.ts]${own}/memfs/cam.m3u8`, 'a segment URL elsewhere');
  same(`[f=mpegts:method=PUT]${own}/memfs/cam.ts`, 'not HLS');
  same(`${own}/memfs/cam.m3u8`, 'a slave without options (its muxer is the tee\'s guess)');
  same(`[f=hls]http://127.0.0.1:8080/memfs/cam.m3u8`, 'no credential');
  same('[f=hls', 'an unclosed option list');
});

t.test('what a process shows hides its run\'s credential: the token and the header\'s Basic value', async (t) => {
  const mask = runMask(run);
  t.equal(mask(`Opening '${own}/memfs/x.ts' for reading`), `Opening 'http://process:cam%3A1:***@127.0.0.1:8080/memfs/x.ts' for reading`);
  t.equal(mask(header), 'Authorization: Basic ***\r\n');
  t.equal(mask(`rtmp://h/live?token=${run.token}`), 'rtmp://h/live?token=***');
  t.equal(mask('a line without it'), 'a line without it');
});
