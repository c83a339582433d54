import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { ffmpeg } from '../../plugins/rtmp/helpers.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';

/*
 * Issue 26.2: the output restreamer-ui (and the Python client's live suite) sends when a channel
 * also publishes over RTMP and SRT: one tee with HLS into memfs (its segment names an escaped
 * `{memfs^:}` URL), FLV to `{rtmp,name=<id>.stream}` and MPEG-TS to `{srt,name=<id>,mode=publish}`.
 * It runs confined, its HLS plays from /memfs, and both servers list the publications.
 */

const TEE = '[f=hls:start_number=0:hls_time=2:hls_list_size=6:hls_flags=append_list+delete_segments:hls_segment_filename={memfs^:}/{processid}_%04d.ts:method=PUT]{memfs}/{processid}.m3u8|[f=flv]{rtmp,name=test.stream}|[f=mpegts]{srt,name=test,mode=publish}';

t.test('the restreamer-ui tee output publishes HLS, RTMP and SRT at once', async (t) => {
  const app = await startApp(t, { config: {
    rtmp: { enable: true, address: '127.0.0.1:0', token: 'tok' }, srt: { enable: true, address: '127.0.0.1:0', token: 'tok' },
  } });
  const body = {
    id: 'test', reference: 'test', autostart: true, reconnect: true, reconnect_delay_seconds: 1, stale_timeout_seconds: 30, type: 'ffmpeg',
    options: ['-err_detect', 'ignore_err', '-y'],
    input: [{ id: 'input_0', address: 'testsrc2=rate=25:size=16x9', options: ['-re', '-f', 'lavfi'] }],
    output: [{
      id: 'output_0', address: TEE,
      cleanup: [{ pattern: 'memfs:/{processid}_*.ts', purge_on_delete: true }, { pattern: 'memfs:/{processid}.m3u8', purge_on_delete: true }],
      options: ['-map', '0:v', '-codec:v', 'libx264', '-r', '25', '-flags', '+global_header', '-tag:v', '7', '-tag:a', '10', '-f', 'tee'],
    }],
  };
  const add = await app.request('POST', '/api/v3/process', { body });
  t.equal(add.status, 200, add.text.slice(0, 300));
  const rtmp = await waitFor(async () => {
    const r = await app.request('GET', '/api/v3/rtmp');
    return r.body.length ? r.body : undefined;
  }, { what: 'the RTMP publication listed', timeout: 30_000 });
  t.same(rtmp.map((c: { name: string }) => c.name), ['/test.stream'], 'GET /api/v3/rtmp');
  const srt = await waitFor(async () => {
    const r = await app.request('GET', '/api/v3/srt');
    return Object.keys(r.body.publisher ?? {}).length ? r.body : undefined;
  }, { what: 'the SRT publication listed', timeout: 30_000 });
  t.ok(Object.keys(srt.publisher).includes('test'), 'GET /api/v3/srt');
  const playlist = await waitFor(async () => {
    const r = await app.request('GET', '/memfs/test.m3u8');
    return r.status === 200 && /test_\d{4}\.ts/.test(r.text) ? r.text : undefined;
  }, { what: 'the HLS playlist in memfs', timeout: 30_000 });
  const segment = /test_\d{4}\.ts/.exec(playlist)![0];
  const seg = await fetch(`${app.url}/memfs/${segment}`);
  t.equal(seg.status, 200, `${segment} plays`);
  t.ok((await seg.arrayBuffer()).byteLength > 188, 'with data');
  // a player gets the RTMP stream the tee publishes
  const port = (app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService).ports().rtmp;
  const player = ffmpeg(t, ['-loglevel', 'error', '-i', `rtmp://127.0.0.1:${port}/test.stream?token=tok`, '-frames:v', '5', '-f', 'null', '-'], 30_000);
  t.equal(await player.done, 0, `an RTMP player gets frames (${player.stderr().slice(-200)})`);
  t.equal((await app.request('GET', '/api/v3/process/test/state')).body.exec, 'running');
});
